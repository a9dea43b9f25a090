import Foundation
import TestSupport

/// A shell loop that runs an example tool `count` times, each run a process of its own, in
/// `folder`: `command` is shell text in which `"$T"` is the tool and `$i` the run number (from 1).
/// The loop stops at the first run that fails. Standard output and error of every run are
/// appended to files of the loop's own, read once it has ended.
///
/// Loops started one after another run at the same time, interleaved however the machine
/// schedules them: nothing here waits for time to pass.
final class ToolLoop {
    private let process = Process()
    private let outputURL: URL
    private let errorsURL: URL

    /// Starts the loop. `environment` entries are added to this process's environment.
    init(_ tool: String, count: Int, command: String, in folder: URL, environment: [String: String]) throws {
        let id = UUID().uuidString
        outputURL = folder.deletingLastPathComponent().appendingPathComponent("loop-\(id).out")
        errorsURL = folder.deletingLastPathComponent().appendingPathComponent("loop-\(id).err")
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "i=1; while [ $i -le \(count) ]; do \(command) >>\"$OUT\" 2>>\"$ERR\" || exit 1; i=$((i+1)); done"]
        process.currentDirectoryURL = folder
        process.environment = ProcessInfo.processInfo.environment.merging(
            environment.merging(["T": exampleToolURL(tool).path, "OUT": outputURL.path, "ERR": errorsURL.path]) { $1 }) { $1 }
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: outputURL)
        try? FileManager.default.removeItem(at: errorsURL)
    }

    /// Waits for the loop to end: its exit status (0 when every run succeeded), and what the
    /// runs printed.
    func finish() -> (status: Int32, output: String, errors: String) {
        process.waitUntilExit()
        let read = { (url: URL) in (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        return (process.terminationStatus, read(outputURL), read(errorsURL))
    }
}
