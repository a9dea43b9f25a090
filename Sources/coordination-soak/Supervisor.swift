import Foundation
import SystemSupport
import Glibc

/// The parent: prepares the run folder, starts the workers, lets them run, stops them, detects
/// the hung ones, then verifies and reports.
enum Supervisor {
    static func run(_ options: SoakOptions) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let layout: RunLayout
        let madeFolder: Bool
        do {
            (layout, madeFolder) = try prepareFolder(options)
        } catch {
            print("coordination-soak: \(error)")
            return 2
        }
        // Every worker (and the parent's verification) uses the same lock directory and version store.
        if !options.defaultLockDirectory {
            setenv(LockDirectoryInfo.environmentVariable, options.lockDirectory ?? layout.locks.path, 1)
        }
        setenv("CLOUDDOCUMENTS_VERSION_STORE", layout.versions.path, 1)
        let lockDirectory = LockDirectoryInfo.current()
        let startCount = lockDirectory.fileCount()

        print("coordination-soak: \(options.processes) workers (\(options.documents) document, \(options.appenders) appender, "
              + "\(options.movers) mover), \(options.seconds) s, \(ProcessInfo.processInfo.activeProcessorCount) cores, pid \(getpid())")
        print("  run folder: \(layout.root.path)")
        print("  lock directory: \(lockDirectory.path)\(options.defaultLockDirectory || options.lockDirectory != nil ? "" : " (private to this run)")"
              + (startCount > 0 ? ", \(startCount) files before the run" : ""))
        print("  version store: \(layout.versions.path)")

        var roles: [WorkerRole] = []
        roles += Array(repeating: .document, count: options.documents)
        roles += Array(repeating: .appender, count: options.appenders)
        roles += Array(repeating: .mover, count: options.movers)
        var workers: [WorkerProcess] = []
        var outcome = RunOutcome()
        for (index, role) in roles.enumerated() {
            do {
                workers.append(try WorkerProcess(index: index, role: role, layout: layout,
                                                 pauseMilliseconds: role == .mover ? options.moverPauseMilliseconds
                                                     : role == .appender ? options.appenderPauseMilliseconds : 0))
            } catch {
                print("coordination-soak: cannot start worker \(index): \(error)")
                outcome.startFailures.append("worker \(index) did not start: \(error)")
            }
        }

        // Ready (documents open), then all go together.
        let readyDeadline = MonotonicClock.now() + UInt64(options.startSeconds) * 1_000_000_000
        var running: [WorkerProcess] = []
        for worker in workers {
            if worker.waitForReady(until: readyDeadline) {
                running.append(worker)
            } else if !worker.isRunning {
                outcome.crashed.append("\(worker.name) \(worker.ending ?? "exited") before it was ready")
            } else {
                print("HUNG: \(worker.name) not ready after \(options.startSeconds) s; locks held by the workers (/proc/<pid>/fdinfo):")
                let holders = HangDiagnostics.lockHolders(workers.filter(\.isRunning).map { ($0.name, $0.pid) }, lockDirectory: lockDirectory)
                (holders.isEmpty ? ["(none)"] : holders).forEach { print("  " + $0) }
                outcome.hung.append(worker.index)
                diagnose(worker, lockDirectory: lockDirectory, layout: layout)
                kill(worker)
            }
        }
        let start = MonotonicClock.now()
        running.forEach { $0.send("go") }

        var maximumLockFiles = lockDirectory.fileCount()
        let end = start + UInt64(options.seconds) * 1_000_000_000
        var nextProgress = start + UInt64(max(options.progressSeconds, 1)) * 1_000_000_000
        while MonotonicClock.now() < end {
            usleep(useconds_t(min(1_000_000, (end - min(end, MonotonicClock.now())) / 1000 + 1)))
            maximumLockFiles = max(maximumLockFiles, lockDirectory.fileCount())
            if options.progressSeconds > 0, MonotonicClock.now() >= nextProgress, MonotonicClock.now() < end {
                nextProgress += UInt64(options.progressSeconds) * 1_000_000_000
                let elapsed = Double(MonotonicClock.now() - start) / 1e9
                let unanswered = workers.reduce(0) { $0 + $1.standardError.current.unansweredSaveRequests }
                let exited = running.filter { !$0.isRunning }.count
                let confirmed = workers.reduce(0) { $0 + WorkerRecords.confirmedCount(layout.log($1.index)) }
                print(String(format: "  %4.0f s: %d appends confirmed; lock directory %d files; “did not answer a save request” %d; %d of %d workers running",
                             elapsed, confirmed, lockDirectory.fileCount(), unanswered, running.count - exited, running.count))
                fflush(nil)
            }
        }
        outcome.seconds = Double(MonotonicClock.now() - start) / 1e9

        // Stop, with a bounded wait; the ones still running are HUNG.
        let stopTime = MonotonicClock.now()
        running.forEach { $0.stop() }
        let graceDeadline = stopTime + UInt64(options.graceSeconds) * 1_000_000_000
        let hung = running.filter { !$0.waitForExit(until: graceDeadline) }
        if !hung.isEmpty {
            // A snapshot of all of them before any is killed (killing one may free the others):
            // who holds which lock file, then each one's threads, kernel waits and backtraces.
            let holders = HangDiagnostics.lockHolders(hung.map { ($0.name, $0.pid) }, lockDirectory: lockDirectory)
            print("HUNG: \(hung.count) workers still running \(options.graceSeconds) s after the stop; locks they hold (/proc/<pid>/fdinfo):")
            (holders.isEmpty ? ["(none)"] : holders).forEach { print("  " + $0) }
            for worker in hung {
                print("HUNG: \(worker.name) still running \(options.graceSeconds) s after the stop")
                outcome.hung.append(worker.index)
                diagnose(worker, lockDirectory: lockDirectory, layout: layout)
            }
            hung.forEach(kill)
        }
        outcome.stopSeconds = Double(MonotonicClock.now() - stopTime) / 1e9
        for worker in running where !outcome.hung.contains(worker.index) {
            if let ending = worker.ending { outcome.crashed.append("\(worker.name) \(ending)") }
        }
        for worker in workers { _ = worker.standardError.waitForEnd(seconds: 5) }
        maximumLockFiles = max(maximumLockFiles, lockDirectory.fileCount())
        outcome.lockFilesAtEnd = lockDirectory.fileCount()
        outcome.maximumLockFiles = maximumLockFiles

        let report = Report(layout: layout, workers: workers.map { ($0.index, $0.role, $0.standardError.current) },
                            outcome: outcome, lockDirectory: lockDirectory)
        let passed = report.print()
        if passed && !options.keep {
            // The folder itself only if this run made it; else what the run put in it.
            if madeFolder {
                try? FileManager.default.removeItem(at: layout.root)
            } else {
                for item in (try? FileManager.default.contentsOfDirectory(at: layout.root, includingPropertiesForKeys: nil)) ?? [] {
                    try? FileManager.default.removeItem(at: item)
                }
            }
            print("(run folder emptied or removed; --keep keeps it)")
        } else {
            print("(run folder kept: \(layout.root.path))")
        }
        return passed ? 0 : 1
    }

    /// The run folder: the one given (absent or empty) or a new temporary one, with its layout;
    /// and whether the run made the folder.
    private static func prepareFolder(_ options: SoakOptions) throws -> (RunLayout, Bool) {
        let manager = FileManager.default
        let path: String
        var made = true
        if let folder = options.folder {
            if manager.fileExists(atPath: folder) {
                let contents = try manager.contentsOfDirectory(atPath: folder)
                guard contents.isEmpty else { throw SoakError("the folder \(folder) is not empty; give an absent or empty one") }
                made = false
            } else {
                try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            path = folder
        } else {
            var template = Array((NSTemporaryDirectory() + "/cd-soak-XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw SoakError("cannot make a temporary folder: \(Errno.current.message)")
            }
            path = String(cString: made)
        }
        guard let resolved = realpath(path, nil) else { throw SoakError("cannot resolve \(path)") }
        defer { free(resolved) }
        let layout = RunLayout(root: URL(fileURLWithPath: String(cString: resolved), isDirectory: true))
        try layout.create(privateLocks: !options.defaultLockDirectory && options.lockDirectory == nil)
        return (layout, made)
    }

    /// Prints what a hung worker is doing: its threads' kernel waits, the kernel's locks on lock
    /// files, every thread's backtrace from a debugger (see ``DebuggerBacktrace``).
    private static func diagnose(_ worker: WorkerProcess, lockDirectory: LockDirectoryInfo, layout: RunLayout) {
        var lines = ["  \(worker.name):"] + HangDiagnostics.report(pid: worker.pid, lockDirectory: lockDirectory)
        lines += DebuggerBacktrace.capture(pid: worker.pid, into: layout.logs.appendingPathComponent("worker-\(worker.index).backtrace"))
            .map { "    " + $0 }
        lines.forEach { print($0) }
        fflush(nil)
    }

    /// Kills a hung worker (SIGKILL) and waits for it, a bounded time.
    private static func kill(_ worker: WorkerProcess) {
        worker.signal(SIGKILL)
        let killed = worker.waitForExit(until: MonotonicClock.now() + 10_000_000_000)
        print("  \(worker.name): " + (killed ? "killed (SIGKILL)" : "still running 10 s after SIGKILL"))
        fflush(nil)
    }
}

/// What happened to the workers as processes.
struct RunOutcome {
    var seconds = 0.0
    var stopSeconds = 0.0
    var hung: [Int] = []
    var crashed: [String] = []
    var startFailures: [String] = []
    var lockFilesAtEnd = 0
    var maximumLockFiles = 0
}
