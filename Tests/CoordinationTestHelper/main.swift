// A separate process for the cross-process tests. Each command coordinates through the real
// lock files, prints what happens as single lines on stdout, and is sequenced by the parent test
// through stdin lines (never by sleeping).
//
//   hold <read|write|delete|move> <path> [purpose]  take the access, print "HELD", wait for a
//                                                  line on stdin, release, print "RELEASED"
//   try <read|write|delete> <path> <probe|wait> [purpose]  make the access; with `probe`, print
//                                                  "WAITED" once this process is seen sleeping in
//                                                  the kernel for a lock (then give up), "OK" if it
//                                                  gets in; with `wait`, print "OK" once it got in;
//                                                  "ERROR <description>" when it fails
//   increment <counter-file> <times>               coordinated read-modify-write, print "DONE"
//   loop-read <path> [count-file]                  coordinated reads until stdin closes; after each
//                                                  read, the number of reads so far is written to
//                                                  count-file (not coordinated)
//   package-ext <ext> ...                          (prefix) register package extensions first
import CloudDocuments
import FileCoordination
import Foundation
import TestSupport

// A process using CloudDocuments: its change monitor knows the sync tools' names (as an app's does).
SyncToolRules.registerWithCoordination()
var arguments = Array(CommandLine.arguments.dropFirst())
while arguments.first == "package-ext", arguments.count >= 2 {
    Coordinator.registerPackageExtension(arguments[1])
    arguments.removeFirst(2)
}

func say(_ line: String) {
    // Unbuffered, whole lines: the parent reads them through a pipe as they come.
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

func coordinator(purpose: String?) -> Coordinator {
    let coordinator = Coordinator()
    if let purpose { coordinator.purposeIdentifier = purpose }
    return coordinator
}

guard let command = arguments.first else { say("usage"); exit(2) }
do {
    switch command {
    case "hold":
        let mode = arguments[1]
        let url = URL(fileURLWithPath: arguments[2])
        let c = coordinator(purpose: arguments.count > 3 ? arguments[3] : nil)
        let body: (URL) throws -> Void = { _ in
            say("HELD")
            _ = readLine()
        }
        switch mode {
        case "read": try c.coordinate(readingItemAt: url, byAccessor: body)
        case "write": try c.coordinate(writingItemAt: url, byAccessor: body)
        case "delete": try c.coordinate(writingItemAt: url, options: .forDeleting, byAccessor: body)
        case "move": try c.coordinate(writingItemAt: url, options: .forMoving, byAccessor: body)
        default: say("bad mode"); exit(2)
        }
        say("RELEASED")
    case "try":
        let url = URL(fileURLWithPath: arguments[2])
        let mode = arguments[1]
        let access: @Sendable (Coordinator) throws -> Void = { c in
            switch mode {
            case "read": try c.coordinate(readingItemAt: url) { _ in }
            case "delete": try c.coordinate(writingItemAt: url, options: .forDeleting) { _ in }
            default: try c.coordinate(writingItemAt: url) { _ in }
            }
        }
        let c = coordinator(purpose: arguments.count > 4 ? arguments[4] : nil)
        c.timeout = Polling.hangGuard
        if arguments[3] == "probe" {
            switch contend(c, access) {
            case .gotIn: say("OK")
            case .waited: say("WAITED")
            case .failed(let why): say("ERROR \(why)")
            }
        } else {
            try access(c)
            say("OK")
        }
    case "increment":
        let url = URL(fileURLWithPath: arguments[1])
        let times = Int(arguments[2]) ?? 0
        for _ in 0..<times {
            try Coordinator().coordinate(writingItemAt: url) { url in
                let text = (try? String(contentsOf: url, encoding: .utf8)) ?? "0"
                let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                try String(value + 1).write(to: url, atomically: false, encoding: .utf8)
            }
        }
        say("DONE")
    case "loop-read":
        let url = URL(fileURLWithPath: arguments[1])
        let counts = arguments.count > 2 ? URL(fileURLWithPath: arguments[2]) : nil
        let stop = Atomic(false)
        let reader = Thread {
            var first = true, reads = 0
            while !stop.load() {
                try? Coordinator().coordinate(readingItemAt: url) { url in
                    if first { say("LOOPING"); first = false }
                    _ = try? Data(contentsOf: url)
                }
                reads += 1
                if let counts { try? Data(String(reads).utf8).write(to: counts, options: .atomic) }
            }
        }
        reader.start()
        while readLine() != nil {}
        stop.store(true)
        say("STOPPED")
    case "upload": try uploadCommand(arguments)  // see UploadCommand.swift
    case "self-test":
        // In-process exclusion, for diagnosing a machine: a read must wait for a held write.
        let url = URL(fileURLWithPath: arguments[1])
        let held = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        Thread {
            try? Coordinator().coordinate(writingItemAt: url) { _ in held.signal(); go.wait() }
        }.start()
        held.wait()
        let outcome = contend { try $0.coordinate(readingItemAt: url) { _ in } }
        switch outcome {
        case .waited: say("OK (the read waited for the write)")
        case .gotIn: say("ERROR the read got in during the write")
        case .failed(let why): say("ERROR \(why)")
        }
        go.signal()
    case "host-sigurg": runHostSIGURG(arguments)
    case "many-files", "race", "churn": try runLockFileCommand(command, Array(arguments.dropFirst()))
    case "save-and-wait": try runSaveAndWait(Array(arguments.dropFirst()))
    case "add-version-and-wait": try runAddVersionAndWait(Array(arguments.dropFirst()))  // VersionCommands.swift
    case "readme-append": try runReadmeAppend(Array(arguments.dropFirst()))  // ReadmeCommands.swift
    case "queue-write", "contend", "upgrade", "mix": try runLockProtocolCommand(command, Array(arguments.dropFirst()))
    case "syncthing-replace", "syncthing-rename", "exchange": runUncoordinatedCommand(command, Array(arguments.dropFirst()))  // UncoordinatedCommands.swift
    case "uncoordinated-create", "uncoordinated-delete", "uncoordinated-burst": runFolderCommand(command, Array(arguments.dropFirst()))  // FolderCommands.swift
    case "remote-serve", "remote-ask", "remote-present", "presence-publish": try runRemoteCommand(command, Array(arguments.dropFirst()))  // RemoteCommands.swift
    case "remote-watch": try runRemoteRuleCommand(command, Array(arguments.dropFirst()))  // RemoteRuleCommands.swift
    case "remote-coordinated-saver": runRemoteSaveCommand(Array(arguments.dropFirst()))  // RemoteSaveCommands.swift
    case "remote-write-holder": runWriteHolderCommand(Array(arguments.dropFirst()))  // EarlyRelinquishCommands.swift
    case "remote-document": runRemoteDocumentCommand(Array(arguments.dropFirst()))  // RemoteDocumentCommands.swift
    case "hostile-victim", "hostile-peer": runHostileCommand(command, Array(arguments.dropFirst()))  // HostilePeerCommands.swift
    case "document-loop": runDocumentLoopCommand(Array(arguments.dropFirst()))  // EditingLoopCommands.swift
    case "append-loop": runAppendLoopCommand(Array(arguments.dropFirst()))  // EditingLoopCommands.swift
    case "conflict-lines": runConflictLinesCommand(Array(arguments.dropFirst()))  // EditingLoopCommands.swift
    default:
        say("unknown command \(command)")
        exit(2)
    }
} catch {
    say("ERROR \(error)")
}
exit(0)

/// A tiny lock-protected flag (the helper must not depend on the library's internals).
final class Atomic<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `lock` held.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func load() -> Value { lock.lock(); defer { lock.unlock() }; return value }
    func store(_ newValue: Value) { lock.lock(); value = newValue; lock.unlock() }
}
