import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// A hostile peer *process* of the same user (`CoordinationTestHelper hostile-peer`) attacks the
/// socket of a presenting process (`hostile-victim`); after each attack, a legitimate coordinated
/// write made here still reaches the victim's presenter, the victim holds a bounded number of
/// descriptors, and it exits normally. Sequenced through the children's lines, never by sleeping
/// (Docs/RemotePresenters.md, *Hostile peers*).
@Suite("Remote presenters: hostile peers of the same user", .serialized)
struct HostilePeerTests {
    /// A presenting process and the socket other processes reach it at.
    struct Victim {
        let setup: RemoteDeliveryTests.Setup
        let process: ChildProcess
        let socket: String

        init() throws {
            setup = try RemoteDeliveryTests.Setup()
            var environment = ProcessInfo.processInfo.environment
            environment[LockDirectory.environmentVariable] = setup.lockDirectory
            environment[RemotePresence.environmentVariable] = "1"
            process = try ChildProcess(["hostile-victim", setup.file.path], environment: environment)
            #expect(process.expect("PRESENTING") == "PRESENTING")
            let peers = setup.lockDirectory + "/@peers"
            let names = try FileManager.default.contentsOfDirectory(atPath: peers)
            guard names.count == 1, let name = names.first else { throw TransportTestFailure("sockets in @peers: \(names)") }
            socket = peers + "/" + name
        }

        /// A number the victim prints on request (`fds`, `turns`).
        func ask(_ command: String, _ prefix: String) -> Int {
            process.send(command)
            guard let line = process.expect(prefix), let value = Int(line.dropFirst(prefix.count + 1)) else { return -1 }
            return value
        }

        /// A coordinated write from this process: the victim's presenter must be asked to
        /// relinquish before the accessor runs, then told of the change, then reacquire. Without a
        /// timeout, a victim that did not answer would be cut off after `answerLimit` and its
        /// presenter not asked at all — which this checks.
        func legitimateWriteIsAnswered() throws {
            try setup.coordinator(timeout: nil).coordinate(writingItemAt: setup.file) { _ in
                #expect(process.readLine() == "RELINQUISH-WRITER")
            }
            #expect(process.readLine() == "DIDCHANGE")
            #expect(process.readLine() == "REACQUIRE")
        }

        /// Ends the victim; it must exit normally (no crash).
        func stop() {
            process.closeInput()
            #expect(process.expect("STOPPED") == "STOPPED")
            process.waitForExit()
            #expect(process.process.terminationReason == .exit && process.process.terminationStatus == 0)
        }
    }

    /// Runs `attack` against a fresh victim; the attacker keeps its connections open while the
    /// legitimate write is made and the victim's descriptors are counted.
    private func survive(_ attack: String, descriptorSlack: Int, before: ((Victim) -> Void)? = nil,
                         check: (String, Victim) -> Void = { _, _ in }, done: (String) -> Void = { _ in }) throws {
        let victim = try Victim()
        try victim.legitimateWriteIsAnswered()  // before: what the first one opens is not the attack's
        let descriptors = victim.ask("fds", "FDS")
        #expect(descriptors > 0)
        before?(victim)
        let hostile = try ChildProcess(["hostile-peer", victim.socket, attack])
        let report = hostile.expect("ATTACKED") ?? "nothing"
        #expect(report.hasPrefix("ATTACKED "), "\(report)")
        check(report, victim)
        try victim.legitimateWriteIsAnswered()
        let during = victim.ask("fds", "FDS")
        #expect(during >= 0 && during <= descriptors + descriptorSlack, "\(during) descriptors open, \(descriptors) before the attack")
        hostile.closeInput()
        if let line = hostile.expect("DONE"), line.hasPrefix("DONE") {
            done(line)
            hostile.waitForExit()
        } else {
            Issue.record("the hostile peer did not finish")
            hostile.kill9()
        }
        try victim.legitimateWriteIsAnswered()  // and once the attacker is gone
        victim.stop()
    }

    @Test("another process truncates the lock directory's shared files (@presence, @epoch): no process dies, coordinated writes go on")
    func truncatedSharedFiles() throws {
        let victim = try Victim()
        try victim.legitimateWriteIsAnswered()  // both processes have mapped both files
        let shared = ["@presence", "@epoch"].map { victim.setup.lockDirectory + "/" + $0 }
        let truncate = try ToolProcess.run(URL(fileURLWithPath: "/usr/bin/truncate"), ["-s", "0"] + shared)
        #expect(truncate.status == 0, "\(truncate.output)")
        // This process: its view of the table is lost (so the victim is not asked), never its life.
        try victim.setup.coordinator(timeout: nil).coordinate(writingItemAt: victim.setup.file) { url in
            try Data("written after the truncation\n".utf8).write(to: url)
        }
        #expect((try? String(contentsOf: victim.setup.file, encoding: .utf8)) == "written after the truncation\n")
        // The victim: a coordinated write of its own reads the table and the epoch.
        victim.process.send("write")
        #expect(victim.process.expect("WROTE") == "WROTE")
        #expect(victim.ask("fds", "FDS") > 0)
        victim.stop()  // exits normally: no SIGBUS
    }

    /// What a report says about `key` (`key=value`).
    private func value(_ key: String, in report: String) -> Int? {
        report.split(separator: " ").first { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
    }

    @Test("malformed frames, oversized lengths and overflowing counts: each connection is closed, the victim serves on",
          arguments: ["malformed", "oversized", "counts"])
    func badFramesCloseTheirConnection(_ attack: String) throws {
        try survive(attack, descriptorSlack: 4, check: { report, _ in
            #expect(value("closed", in: report) != nil && value("closed", in: report) == value("of", in: report), "\(report)")
        })
    }

    @Test("frames cut short: an unfinished frame at end of file is dropped, unfinished frames held open cost one frame each")
    func truncatedFrames() throws {
        try survive("truncated", descriptorSlack: 20 + 4, check: { report, _ in
            #expect(value("closed", in: report) == 2, "\(report)")
            #expect(value("held", in: report) == 20, "\(report)")
        })
    }

    @Test("descriptors attached to frames (SCM_RIGHTS) are discarded by the kernel: none reaches the victim's table")
    func attachedDescriptorsAreDiscarded() throws {
        try survive("descriptors", descriptorSlack: 4 + 4, check: { report, _ in
            #expect(value("answered", in: report) == 100 * 4, "\(report)")
            #expect((value("descriptors", in: report) ?? 0) >= 200 * 100, "\(report)")
        })
    }

    @Test("peers that send lookups and never read their answers do not stall the endpoint: they are dropped at the byte cap")
    func silentPeersAreDropped() throws {
        try survive("silence", descriptorSlack: 6 + 4, check: { report, _ in
            #expect((value("queued", in: report) ?? 0) >= 8192, "\(report)")
        }, done: { line in
            // 20,000 unread answers do not fit in the bounds: every silent connection was dropped.
            #expect(value("dropped", in: line) == 6, "\(line)")
        })
    }

    @Test("more connections than the cap: the idlest is closed for each newcomer, the legitimate asker is served")
    func connectionsBeyondTheCap() throws {
        try survive("connections", descriptorSlack: RemoteBounds.maximumConnections + 4, check: { report, _ in
            #expect(value("opened", in: report) == RemoteBounds.maximumConnections + 44, "\(report)")
            #expect(value("answered", in: report) == 1, "\(report)")
        })
    }

    @Test("a flood of notifications for a presenter whose queue is blocked queues at most the budget, and the rest is dropped")
    func notificationFloodIsBounded() throws {
        let victim = try Victim()
        try victim.legitimateWriteIsAnswered()
        let number = victim.ask("number", "NUMBER")
        victim.process.send("block")
        #expect(victim.process.expect("BLOCKED") == "BLOCKED")
        let hostile = try ChildProcess(["hostile-peer", victim.socket, "flood", victim.setup.file.path, "\(number)"])
        let report = hostile.expect("ATTACKED") ?? "nothing"
        #expect(report.contains("sent=20000") && report.contains("answered=1"), "\(report)")
        let limit = RemoteHostileTesting.remoteDeliveryLimit
        let waiting = victim.ask("waiting", "WAITING"), queued = victim.ask("queued", "QUEUED")
        #expect(waiting >= 0 && waiting <= limit, "\(waiting) messages wait, the budget is \(limit)")
        // Each message queued has one marker behind it (which gives its unit back).
        #expect(queued >= 0 && queued <= 2 * limit, "\(queued) operations on the presenter queue")
        victim.process.send("unblock")
        #expect(victim.process.expect("UNBLOCKED") == "UNBLOCKED")
        #expect(victim.ask("waiting", "WAITING") == 0, "every unit came back once the queue ran")
        hostile.closeInput()
        #expect(hostile.expect("DONE")?.hasPrefix("DONE") == true)
        hostile.waitForExit()
        try victim.legitimateWriteIsAnswered()
        victim.stop()
    }

    @Test("at its descriptor limit the victim closes its idlest connection for a newcomer, and its endpoint does not spin")
    func descriptorLimitDoesNotSpin() throws {
        let turnsBefore = Locked(0)
        try survive("connections", descriptorSlack: 40, before: { victim in
            turnsBefore.withLock { $0 = victim.ask("turns", "TURNS") }
            victim.process.send("limit 32")
            #expect(victim.process.expect("LIMITED")?.hasPrefix("LIMITED") == true)
        }, check: { report, victim in
            #expect(value("answered", in: report) == 1, "\(report)")
            // Each turn of the poll loop handles an event (a connection, a frame); a thread that
            // spun on a listener it cannot accept from would turn millions of times meanwhile.
            let turns = victim.ask("turns", "TURNS") - turnsBefore.withLock { $0 }
            #expect(turns < 5_000, "\(turns) turns of the endpoint's loop for \(RemoteBounds.maximumConnections + 44) connections")
        })
    }
}
