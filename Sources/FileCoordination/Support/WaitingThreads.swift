import Foundation

/// Threads for jobs that may block for a long time — an asynchronous coordination waiting for its
/// locks and for presenters' answers.
///
/// Each job starts **at once**: on a pooled thread that is idle, or else on a new thread. A job
/// is never queued behind a busy thread, so a job blocked for minutes delays no other job; that
/// is why these are not `DispatchQueue.global()`, whose blocked threads starve the work queued
/// behind them until libdispatch adds a thread (about a second on a 2-core machine). Reusing idle
/// threads saves creating and joining one per asynchronous coordination (a `clone` and several
/// futex wake-ups, measured at one per append in `document-benchmark --editors-only`).
///
/// An idle thread waits at most `idleLifetime` for its next job, then ends; at most
/// `maximumIdle` wait at once (a thread finding that many idle ends at once), so a burst of
/// coordinations leaves at most that many threads behind, for at most that long.
///
/// Never hangs: `run` takes the lock only to count; a job waits for no other job. Process-wide,
/// like libdispatch's global queues: threads are a resource of the process, and a job carries all
/// it needs (no state of any runtime is kept here).
package final class WaitingThreads: @unchecked Sendable {
    // @unchecked: `idle` and `jobs` are only read or written with `condition` locked.
    private let condition = NSCondition()
    /// Threads waiting for a job.
    private var idle = 0
    /// Jobs handed over, each to a distinct idle thread (`jobs.count <= idle` always).
    private var jobs: [@Sendable () -> Void] = []

    let idleLifetime: TimeInterval
    let maximumIdle: Int
    private let name: String

    /// The pool for asynchronous coordinations.
    static let coordinations = WaitingThreads(name: "FileCoordination.wait")

    package init(name: String, idleLifetime: TimeInterval = 5, maximumIdle: Int = 4) {
        self.name = name
        self.idleLifetime = idleLifetime
        self.maximumIdle = maximumIdle
    }

    /// Runs `job` now, on an idle thread of the pool or a new one.
    package func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        if idle > jobs.count {
            jobs.append(job)
            condition.signal()
            condition.unlock()
            return
        }
        condition.unlock()
        let thread = Thread { [self] in serve(first: job) }
        thread.name = name
        thread.start()
    }

    /// The loop of a pooled thread: its job, then each job handed over until idle too long.
    private func serve(first: @escaping @Sendable () -> Void) {
        var job = first
        while true {
            job()
            condition.lock()
            guard idle < maximumIdle else {
                condition.unlock()
                return
            }
            idle += 1
            let deadline = Date(timeIntervalSinceNow: idleLifetime)
            while jobs.isEmpty, condition.wait(until: deadline) {}
            idle -= 1
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            job = jobs.removeFirst()
            condition.unlock()
        }
    }
}
