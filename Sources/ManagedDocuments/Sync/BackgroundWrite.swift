import Dispatch
import FileCoordination

/// One file write run on another thread while the caller goes on with other work, then waits
/// for it: a save flushes its change log (`fsync`, rename, folder `fsync`) while SQLite writes
/// the save's pages into its WAL (uncommitted), instead of one after the other.
///
/// ``wait()`` must be called once: it returns what the work returned, or throws what it threw.
///
/// **Why the wait is unbounded and cannot hang.** The work is file-system calls on files of this
/// device's own log folder (open, write, `fsync`, rename, folder `fsync`): it takes no lock and
/// waits for no thread or process, so it ends once the kernel answers, whatever the waiter holds.
/// Its queue is private to one ``StoreSynchronizer`` and used only by its saves, one at a time
/// (under the synchronizer's state lock), so the work never queues behind another job that could
/// wait for this waiter. A disk that never answers blocks the same calls made inline, as before.
final class BackgroundWrite<Value: Sendable>: Sendable {
    /// The work's outcome, set once by the work (`Locked`: written on the queue's thread, read by
    /// the waiter after `finished` is signalled).
    private let outcome = Locked<Result<Value, ManagedStoreError>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `work` on `queue`.
    init(on queue: DispatchQueue, _ work: @escaping @Sendable () throws(ManagedStoreError) -> Value) {
        queue.async { [outcome, finished] in
            let result: Result<Value, ManagedStoreError>
            do throws(ManagedStoreError) { result = .success(try work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            finished.signal()
        }
    }

    /// Waits for the work to finish: its value, or its error.
    func wait() throws(ManagedStoreError) -> Value {
        finished.wait()
        guard let result = outcome.withLock({ $0 }) else { throw .unavailable(reason: "a background write ended without a result") }
        return try result.get()
    }
}
