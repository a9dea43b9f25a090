import Foundation

/// Runs a document's `async` lifecycle operations (``CloudDocument/openThrowing()``,
/// ``CloudDocument/saveThrowing(to:for:)``, …) on its lifecycle queue, as actor jobs.
///
/// The first version queued a block and resumed the caller through a continuation. A continuation
/// resumes its task on the generic executor, which then hops to the main actor: two thread
/// wake-ups (each a futex wake and a switch of CPU), 15–30 µs on a 2-core VM, a twentieth of a
/// 4 KiB save. An actor whose executor is the lifecycle queue leaves the main actor and comes
/// back to it in one switch each way: the body runs in the operation's own task, and the task
/// goes straight back to the main actor when it returns.
///
/// Order is kept: the executor queues each job on the lifecycle queue (`DispatchQueue.async`) in
/// the caller's main-actor turn, so an operation runs after every block and operation queued
/// there before it, as with `enqueueFileAccess`.
///
/// Internal; one per operation (the queue, not the actor, orders them).
actor LifecycleRunner {
    private let executor: LifecycleExecutor

    init(queue: DispatchQueue) {
        executor = LifecycleExecutor(queue: queue)
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Runs `body` on the lifecycle queue, then `finish`, and returns `body`'s result. `body` sees
    /// no task-local value of the caller's task (``VersionStore/override`` is unbound, as on a
    /// plain queue block): the operation behaves as it did when it ran outside any task.
    func run<T: Sendable>(_ body: @Sendable () throws -> T, finish: @Sendable () -> Void) throws -> T {
        defer { finish() }
        return try VersionStore.$override.withValue(nil) { try body() }
    }
}

/// The serial executor of a ``LifecycleRunner``: each job becomes a block on the document's
/// lifecycle queue. Sendable: its only state is the queue, immutable.
final class LifecycleExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unownedJob = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { unownedJob.runSynchronously(on: executor) }
    }
}
