import ExampleDocuments
import Foundation

/// The other program: opens the same text document (a coordinated read), makes one edit and
/// closes it (a coordinated, durable save). Its lines go to the first process through a pipe, and
/// the first process tells it when to go on through another, so the two take turns without
/// sleeping. The first process never blocks its main actor on this process: the main actor is
/// where its own document answers this process's coordinators (a save before their read).
@MainActor
final class SecondProcess {
    static let flag = "--second-process"

    /// The edit the second process makes.
    enum Edit: Sendable {
        /// Appends a line naming the process.
        case appendLine
        /// Replaces every occurrence of the first text with the second.
        case replace(String, with: String)

        /// The edit as command-line arguments (after the path and the timing).
        var arguments: [String] {
            switch self {
            case .appendLine: return ["append-line"]
            case .replace(let target, let replacement): return ["replace", target, replacement]
            }
        }

        /// The edit from its command-line arguments; `nil` when they name none.
        init?(arguments: [String]) {
            switch arguments.first {
            case "append-line" where arguments.count == 1: self = .appendLine
            case "replace" where arguments.count == 3: self = .replace(arguments[1], with: arguments[2])
            default: return nil
            }
        }
    }

    /// When the second process makes its edit and saves.
    enum Timing: String, Sendable {
        /// Opens, edits, closes (saving) at once.
        case atOnce = "at-once"
        /// Opens, says `READY`, and edits and closes once told to go on.
        case editWhenTold = "edit-when-told"
        /// Opens and edits, leaves the edit unsaved and says `READY`; closes once told to go on.
        case keepUnsavedUntilTold = "keep-unsaved-until-told"
    }

    // MARK: The second process

    /// Runs the second process: `arguments` are the document's path, the timing and the edit.
    static func run(arguments: [String]) async -> Int32 {
        guard arguments.count >= 3, let timing = Timing(rawValue: arguments[1]),
              let edit = Edit(arguments: Array(arguments.dropFirst(2))) else {
            say("usage: clouddocs-demo \(flag) PATH at-once|edit-when-told|keep-unsaved-until-told append-line | replace TEXT NEW-TEXT")
            say("DONE")
            return 2
        }
        let url = URL(fileURLWithPath: arguments[0])
        let document = TextDocument(fileURL: url)
        do {
            try await document.openThrowing()
            say("opened \(url.lastPathComponent): \(Narration.quoted(document.text))")
            if timing == .editWhenTold { await waitUntilTold() }
            let done = apply(edit, to: document)
            if timing == .keepUnsavedUntilTold {
                say("\(done), not saved yet")
                await waitUntilTold()
                say(document.hasUnsavedChanges ? "still unsaved: saving it now" : "already saved (asked by the first process's read)")
            }
            try await document.closeThrowing()  // saves what is unsaved, through the coordinator
            say(timing == .keepUnsavedUntilTold ? "closed" : "\(done) and saved; closed")
            say("DONE")
            return 0
        } catch {
            say("failed: \(error.localizedDescription)")
            say("DONE")
            return 1
        }
    }

    /// Writes one line to stdout at once (the first process reads it through a pipe as it comes).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    private static func apply(_ edit: Edit, to document: TextDocument) -> String {
        switch edit {
        case .appendLine:
            document.append("Added by the second process (pid \(getpid())).\n")
            return "appended a line"
        case .replace(let target, let replacement):
            let count = document.replace(target, with: replacement)
            return "changed \(Narration.quoted(target)) to \(Narration.quoted(replacement)) (\(count)×)"
        }
    }

    /// Says `READY` and waits for a line on stdin, off the main actor (the document's messages
    /// need it meanwhile).
    private static func waitUntilTold() async {
        say("READY")
        _ = await Task.detached { readLine() }.value
    }

    // MARK: The first process's handle on it

    private let process: Process
    private let input: FileHandle
    /// The second process's output lines (iterated by one relay at a time).
    private let lines: AsyncStream<String>

    private init(process: Process, input: FileHandle, lines: AsyncStream<String>) {
        self.process = process
        self.input = input
        self.lines = lines
    }

    /// Starts the second process with `edit` on the document at `url`, made when `timing` says,
    /// and relays its lines until it is ready to be told to go on (`READY`) or done (`DONE`).
    static func start(_ edit: Edit, editing url: URL, timing: Timing = .atOnce) async throws -> SecondProcess {
        try await launch([flag, url.path, timing.rawValue] + edit.arguments)
    }

    /// Starts this program again with `arguments` (a second-process mode) and relays its lines
    /// until it is ready to be told to go on (`READY`) or done (`DONE`).
    static func launch(_ arguments: [String]) async throws -> SecondProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        let output = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        Narration.event("started the second process (pid \(process.processIdentifier))")
        let second = SecondProcess(process: process, input: input.fileHandleForWriting,
                                   lines: Self.lines(of: output.fileHandleForReading))
        await second.relayUntilReadyOrDone()
        return second
    }

    /// Tells the second process to go on, and relays its lines until it is done.
    func goOn() async {
        input.write(Data("go\n".utf8))
        await relayUntilReadyOrDone()
    }

    /// Relays the lines until `READY` or `DONE`; after `DONE` (or the end of the output) waits
    /// for the process to end.
    func relayUntilReadyOrDone() async {
        for await line in lines {
            if line == "READY" { return }
            if line == "DONE" { break }
            Narration.event("[second process] \(line)")
        }
        try? input.close()
        let process = self.process
        await Task.detached { process.waitUntilExit() }.value
    }

    /// The lines `handle` reads, read on a thread of their own (never on the main actor).
    private static func lines(of handle: FileHandle) -> AsyncStream<String> {
        AsyncStream { continuation in
            let reader = Thread {
                var pending = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    pending.append(chunk)
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                        pending.removeSubrange(pending.startIndex...newline)
                    }
                }
                continuation.finish()
            }
            reader.start()
        }
    }
}
