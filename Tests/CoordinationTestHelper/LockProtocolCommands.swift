// Worker commands for the lock-protocol tests (Tests/FileCoordinationTests/LockProtocol*.swift
// and Tests/CloudDocumentsTests/DocumentUpgradeTests.swift). Sequenced through stdin/stdout lines.
//
//   queue-write <path> <text>        print "STARTING", write <text> in a coordinated write with no
//                                    timeout (so it queues behind whoever holds the item), print "WROTE"
//   contend                          for each stdin line "<read|write> <path> <probe|wait> [purpose]",
//                                    try that access with a new coordinator and print "GOT" once it
//                                    got in, or (with `probe`) "WAITED" once it is seen sleeping in
//                                    the kernel for a lock (then it gives up), or "ERROR <description>";
//                                    ends at "quit"
//   upgrade <path> [purpose]         read <path>, print "READING", wait for a line, then write it
//                                    inside the read (an upgrade) and print "UPGRADED" or
//                                    "ERROR <case>", wait for a line, release, print "RELEASED"
//   mix <counter-file> <times> <seed>  <times> coordinated accesses of a counter file, mixing
//                                    increments in a write, increments in a write nested in a read
//                                    (an upgrade), plain reads, plain and group mode; print
//                                    "DONE <increments> <wouldDeadlocks>" or "ERROR <description>"
import FileCoordination
import Foundation
import TestSupport

func runLockProtocolCommand(_ command: String, _ arguments: [String]) throws {
    switch command {
    case "queue-write":
        let url = URL(fileURLWithPath: arguments[0])
        say("STARTING")
        try Coordinator().coordinate(writingItemAt: url) { url in
            try arguments[1].write(to: url, atomically: false, encoding: .utf8)
        }
        say("WROTE")
    case "contend":
        // "quit" ends it: end of input may never come, since a sibling child started at the same
        // moment can inherit the parent's end of this process's stdin pipe.
        while let line = readLine(), line != "quit" {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 3 else { say("ERROR bad line"); continue }
            let url = URL(fileURLWithPath: words[1])
            let contender = coordinator(purpose: words.count > 3 ? words[3] : nil)
            contender.timeout = Polling.hangGuard
            let access: @Sendable (Coordinator) throws -> Void = { c in
                if words[0] == "read" {
                    try c.coordinate(readingItemAt: url) { _ in }
                } else {
                    try c.coordinate(writingItemAt: url) { _ in }
                }
            }
            if words[2] == "probe" {
                switch contend(contender, access) {
                case .gotIn: say("GOT")
                case .waited: say("WAITED")
                case .failed(let why): say("ERROR \(why)")
                }
            } else {
                do {
                    try access(contender)
                    say("GOT")
                } catch {
                    say("ERROR \(error)")
                }
            }
        }
    case "upgrade":
        let url = URL(fileURLWithPath: arguments[0])
        let upgrader = coordinator(purpose: arguments.count > 1 ? arguments[1] : nil)
        try upgrader.coordinate(readingItemAt: url) { url in
            say("READING")
            _ = readLine()
            do {
                try upgrader.coordinate(writingItemAt: url) { _ in }
                say("UPGRADED")
            } catch CoordinationError.wouldDeadlock {
                say("ERROR wouldDeadlock")
            } catch {
                say("ERROR \(error)")
            }
            _ = readLine()
        }
        say("RELEASED")
    case "mix":
        let url = URL(fileURLWithPath: arguments[0])
        let result = mixedAccesses(url, times: Int(arguments[1]) ?? 0, seed: Int(arguments[2]) ?? 0)
        say(result.error.map { "ERROR " + $0 } ?? "DONE \(result.increments) \(result.deadlocks)")
    default:
        say("unknown command \(command)")
    }
}

