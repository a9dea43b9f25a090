import ExampleDocuments
import Foundation

/// The other program: opens the same text document (a coordinated read), appends a line and
/// closes it (a coordinated, durable save). Its lines go to the first process through a pipe.
@MainActor
enum SecondProcess {
    static let flag = "--second-process"

    static func run(path: String) async -> Int32 {
        let url = URL(fileURLWithPath: path)
        let document = TextDocument(fileURL: url)
        do {
            try await document.openThrowing()
            print("opened \(url.lastPathComponent): \(Narration.quoted(document.text))")
            document.append("Added by the second process (pid \(getpid())).\n")
            try await document.closeThrowing()  // saves through the coordinator
            print("appended a line and saved; closed")
            print("DONE")
            return 0
        } catch {
            print("failed: \(error.localizedDescription)")
            print("DONE")
            return 1
        }
    }

    /// Starts the second process and relays its output until it is done.
    static func start(editing url: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [flag, url.path]
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
