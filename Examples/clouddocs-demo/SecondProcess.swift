import ExampleDocuments
import Foundation

/// The other program: opens the same text document (a coordinated read), makes one edit and
/// closes it (a coordinated, durable save). Its lines go to the first process through a pipe; the
/// first process waits for its last line, `DONE`, so the two take turns without sleeping.
@MainActor
enum SecondProcess {
    static let flag = "--second-process"

    /// The edit the second process makes.
    enum Edit: Sendable {
        /// Appends a line naming the process.
        case appendLine
        /// Replaces every occurrence of the first text with the second.
        case replace(String, with: String)

        /// The edit as command-line arguments (after the path).
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

    /// Runs the second process: `arguments` are the document's path and the edit.
    static func run(arguments: [String]) async -> Int32 {
        guard let path = arguments.first, let edit = Edit(arguments: Array(arguments.dropFirst())) else {
            print("usage: clouddocs-demo \(flag) PATH append-line | replace TEXT NEW-TEXT")
            print("DONE")
            return 2
        }
        let url = URL(fileURLWithPath: path)
        let document = TextDocument(fileURL: url)
        do {
            try await document.openThrowing()
            print("opened \(url.lastPathComponent): \(Narration.quoted(document.text))")
            switch edit {
            case .appendLine:
                document.append("Added by the second process (pid \(getpid())).\n")
                try await document.closeThrowing()  // saves through the coordinator
                print("appended a line and saved; closed")
            case .replace(let target, let replacement):
                let count = document.replace(target, with: replacement)
                try await document.closeThrowing()
                print("changed \(Narration.quoted(target)) to \(Narration.quoted(replacement)) (\(count)×) and saved; closed")
            }
            print("DONE")
            return 0
        } catch {
            print("failed: \(error.localizedDescription)")
            print("DONE")
            return 1
        }
    }

    /// Starts the second process with `edit` on the document at `url`, relays its output, and
    /// returns when it is done.
    static func start(_ edit: Edit, editing url: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [flag, url.path] + edit.arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        Narration.event("started the second process (pid \(process.processIdentifier))")
        let reader = output.fileHandleForReading
        var pending = Data()
        reading: while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                if line == "DONE" { break reading }
                Narration.event("[second process] \(line)")
            }
        }
        process.waitUntilExit()
    }
}
