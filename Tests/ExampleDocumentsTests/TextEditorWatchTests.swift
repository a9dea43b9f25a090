import Foundation
import TestSupport
import Glibc
import Testing

/// `text-editor watch` while other programs, which do not coordinate, rename and delete the file.
@Suite("text-editor watch: moves and deletions by other programs", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct TextEditorWatchTests {
    @Test("mv then rm, each a process of its own: watch prints the move, then the deletion, and ends")
    func moveThenDelete() async throws {
        try Scratch.with { folder in
            try Data("hello\n".utf8).write(to: folder.appendingPathComponent("notes.txt"))
            let watch = try WatchProcess(file: "notes.txt", in: folder)
            defer { watch.stop() }
            try watch.waitForOutput("Watching notes.txt")

            try run("/bin/mv", "notes.txt", "renamed.txt", in: folder)
            try watch.waitForOutput("moved to \(folder.appendingPathComponent("renamed.txt").path)")

            try run("/bin/rm", "renamed.txt", in: folder)
            try watch.waitForOutput("deleted: renamed.txt is gone")
            try watch.waitForOutput("state: [closed]")
            #expect(try watch.waitForExit() == 0, "\(watch.output)")
            #expect(!watch.output.contains("changed by another process"), "\(watch.output)")
        }
    }
}

/// `text-editor watch FILE` running in `folder`, its output going to a file read as it grows.
private final class WatchProcess {
    let process = Process()
    private let outputURL: URL

    init(file: String, in folder: URL) throws {
        outputURL = folder.deletingLastPathComponent().appendingPathComponent("watch-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        process.executableURL = exampleToolURL("text-editor")
        process.arguments = ["watch", file]
        process.currentDirectoryURL = folder
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = process.standardOutput
        try process.run()
    }

    var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }

    /// Waits until the output contains `text` (fails at once if the program ended without it).
    func waitForOutput(_ text: String) throws {
        try Polling.blockUntil("\(text.debugDescription) in the output", details: { "output: \(self.output)" }) {
            if output.contains(text) { return true }
            guard process.isRunning || output.contains(text) else {
                throw WatchFailure(description: "ended without printing \(text.debugDescription); output: \(output)")
            }
            return false
        }
    }

    /// Waits for the program to end by itself; its exit status.
    func waitForExit() throws -> Int32 {
        try Polling.blockUntil("text-editor watch to end", details: { "output: \(self.output)" }) { !process.isRunning }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: outputURL)
    }
}

private struct WatchFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs `executable` with `arguments` in `folder` as a process of its own and waits for it.
private func run(_ executable: String, _ arguments: String..., in folder: URL) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = folder
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(executable) \(arguments)")
}
