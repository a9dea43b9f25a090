import FileCoordination
import Foundation
import Glibc

/// A real program started by a test fixture (Syncthing, rclone), with its output in a log file.
/// It is stopped only by its own PID: `stop()` sends SIGTERM, waits up to 5 s, then SIGKILL.
public final class ToolProcess: Sendable {
    public let name: String
    public let logURL: URL
    public let pid: Int32
    /// The Foundation process; only touched under the lock (Process is not Sendable).
    private let process: Locked<Process?>

    /// Starts `executable` with `arguments`, the environment of this process plus `environment`,
    /// stdin from /dev/null and stdout + stderr appended to `logURL`.
    public init(name: String, executable: URL, arguments: [String], environment: [String: String] = [:],
                logURL: URL) throws {
        self.name = name
        self.logURL = logURL
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: logURL.path])
        }
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        pid = process.processIdentifier
        self.process = Locked(process)
    }

    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// The last `lines` lines of the log, for failure messages.
    public func logTail(_ lines: Int = 15) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return "--- \(name) (\(logURL.path)), last lines:\n"
            + text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// Stops the process (SIGTERM, then SIGKILL after 5 s) and reaps it. Idempotent.
    ///
    /// Whether it ended is learned with `waitpid` on its PID, not from `Process.isRunning`:
    /// swift-corelibs-foundation sometimes never notices a child's exit (its SIGCHLD is lost when
    /// several children end at once), and `waitUntilExit()` then spins for ever beside a zombie.
    public func stop() {
        process.withLock { slot in
            guard slot != nil else { return }
            slot = nil
            kill(pid, SIGTERM)
            // A grace period for a clean exit, not a synchronisation: SIGKILL ends it anyway.
            if !Polling.holds(within: .seconds(5), interval: .milliseconds(10), { Self.hasEnded(pid) }) {
                kill(pid, SIGKILL)
                _ = Polling.holds(within: .seconds(60), interval: .milliseconds(10), { Self.hasEnded(pid) })
            }
        }
    }

    /// Whether the child `pid` has ended: reaped now, or already reaped (by Foundation's monitor).
    private static func hasEnded(_ pid: Int32) -> Bool {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        return result == pid || (result == -1 && errno == ECHILD)
    }

    deinit { stop() }

    /// Runs a program to its end and returns its exit status and output (stdout + stderr).
    public static func run(_ executable: URL, _ arguments: [String],
                           environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
