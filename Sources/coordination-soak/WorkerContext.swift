import Foundation
import Glibc
import Synchronization
import SystemSupport

/// What every worker process shares: its identity, its log, and the control lines from the
/// parent on standard input — `go` to start, then the end of input to stop (so a worker also
/// stops when the parent dies). Standard output carries `READY` and `DONE` back.
final class WorkerContext: Sendable {
    let role: WorkerRole
    let index: Int
    let layout: RunLayout
    /// The pause between two operations (`--mover-pause-ms`, `--appender-pause-ms`).
    let pauseMilliseconds: Int
    let log: WorkerLog
    private let stopFlag = Atomic<Bool>(false)
    private let goSignal = DispatchSemaphore(value: 0)

    /// Parses `--worker ROLE INDEX RUN-FOLDER PAUSE-MS` (the arguments after `--worker`).
    init(arguments: [String]) throws {
        guard arguments.count == 4, let role = WorkerRole(rawValue: arguments[0]), let index = Int(arguments[1]),
              let pause = Int(arguments[3]) else {
            throw SoakError("bad worker arguments: \(arguments)")
        }
        self.role = role
        self.index = index
        self.layout = RunLayout(root: URL(fileURLWithPath: arguments[2], isDirectory: true))
        self.pauseMilliseconds = pause
        self.log = try WorkerLog(layout.log(index))
    }

    /// Whether the parent asked the worker to stop (closed its standard input).
    var shouldStop: Bool { stopFlag.load(ordering: .acquiring) }

    /// Starts the thread that reads the parent's control lines and the one that samples the
    /// number of open descriptors (and flushes the log) every quarter of a second.
    func startControlThreads() {
        Thread { [self] in
            var reader = LineReader(descriptor: 0)
            var started = false
            while let line = reader.readLine() {
                if line == "go" && !started {
                    started = true
                    goSignal.signal()
                }
            }
            stopFlag.store(true, ordering: .releasing)
            if !started { goSignal.signal() }
        }.start()
        Thread { [self] in
            var ticks = 0
            while true {
                log.descriptors(Self.openDescriptorCount())
                ticks += 1
                if ticks % 4 == 0 { log.flush() }
                usleep(250_000)
            }
        }.start()
    }

    /// Tells the parent the worker is ready and waits (off the main actor) for `go`.
    func readyAndWaitForGo() async {
        Self.say("READY")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread { [self] in
                goSignal.wait()
                continuation.resume()
            }.start()
        }
    }

    /// Records the end and tells the parent.
    func finish() {
        log.finished()
        Self.say("DONE")
    }

    /// One line on standard output, written at once.
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
    }

    /// The number of entries in /proc/self/fd (minus the one the listing itself opens).
    static func openDescriptorCount() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return count - 1
    }

    /// Sleeps `milliseconds` (pacing, not synchronisation).
    func pause(_ milliseconds: Int) {
        if milliseconds > 0 { usleep(useconds_t(milliseconds) * 1000) }
    }
}

/// The monotonic clock, in nanoseconds.
enum MonotonicClock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
