import Foundation
import Glibc
import SystemSupport

/// The parent's handle on one worker: this program again, as
/// `--worker ROLE INDEX RUN-FOLDER PAUSE-MS`, with its standard input (control lines),
/// output (`READY`, `DONE`) and error (collected) on pipes — as coordination-benchmark starts its
/// children (BenchmarkChild), plus standard error.
final class WorkerProcess {
    let index: Int
    let role: WorkerRole
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private var lines: LineReader
    let standardError: StandardErrorCollector
    private var inputOpen = true

    init(index: Int, role: WorkerRole, layout: RunLayout, pauseMilliseconds: Int) throws {
        self.index = index
        self.role = role
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--worker", role.rawValue, String(index), layout.root.path, String(pauseMilliseconds)]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        lines = LineReader(descriptor: output.fileHandleForReading.fileDescriptor)
        try process.run()
        standardError = StandardErrorCollector(descriptor: dup(errors.fileHandleForReading.fileDescriptor),
                                               file: layout.standardError(index))
    }

    var pid: Int32 { process.processIdentifier }
    var name: String { "worker \(index) (\(role.rawValue), pid \(pid))" }
    var isRunning: Bool { process.isRunning }

    /// Waits for the worker's `READY` until `deadline` (monotonic nanoseconds).
    func waitForReady(until deadline: UInt64) -> Bool {
        while true {
            let now = MonotonicClock.now()
            guard now < deadline else { return false }
            let left = Int32(min(UInt64(Int32.max), (deadline - now) / 1_000_000 + 1))
            guard let line = lines.readLine(timeoutMilliseconds: left) else { return false }
            if line == "READY" { return true }
        }
    }

    /// Sends a control line (ignored when the worker is gone: SIGPIPE is ignored by the parent).
    func send(_ line: String) {
        guard inputOpen else { return }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(input.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// Asks the worker to stop: ends its standard input.
    func stop() {
        guard inputOpen else { return }
        inputOpen = false
        try? input.fileHandleForWriting.close()
    }

    func signal(_ signal: Int32) { _ = kill(pid, signal) }

    /// Waits until the worker exits or `deadline` passes; whether it exited.
    func waitForExit(until deadline: UInt64) -> Bool {
        while process.isRunning {
            if MonotonicClock.now() >= deadline { return false }
            usleep(50_000)
        }
        return true
    }

    /// How it ended: `nil` while running, else the exit status or the signal.
    var ending: String? {
        guard !process.isRunning else { return nil }
        switch process.terminationReason {
        case .exit: return process.terminationStatus == 0 ? nil : "exited with status \(process.terminationStatus)"
        case .uncaughtSignal: return "killed by signal \(process.terminationStatus)"
        @unknown default: return "ended (\(process.terminationStatus))"
        }
    }
}
