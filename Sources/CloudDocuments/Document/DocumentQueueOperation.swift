import Foundation

/// A block on the document's presenter queue (``CloudDocument/presentedItemOperationQueue``): a
/// presenter message or a reacquirer a coordinator delivered. It ignores `cancel()`, so
/// `presentedItemOperationQueue.cancelAllOperations()` (which the app may call, the queue being
/// public) cannot leave a coordinator waiting forever for an answer. `Operation` objects the app
/// itself adds to the queue are cancelled as usual (see ``DocumentOperationQueue``).
///
/// On swift-corelibs-foundation `OperationQueue.cancelAllOperations()` calls `cancel()` on every
/// operation, and `Operation.start()` skips `main()` only when `isCancelled` is set, which only
/// `Operation.cancel()` does; overriding it is therefore enough.
final class DocumentQueueOperation: Operation, @unchecked Sendable {
    // @unchecked: `work` is set once in init and read only by `main()`, which the queue runs once,
    // after the operation was added (the queue's own locking orders the two).
    private let work: @Sendable () -> Void

    init(_ work: @escaping @Sendable () -> Void) {
        self.work = work
    }

    override func main() { work() }

    /// Does nothing: the document's own work always runs (see the type's documentation).
    override func cancel() {}
}

/// The class of ``CloudDocument/presentedItemOperationQueue``: an `OperationQueue` whose *blocks*
/// ignore `cancel()`. Every block added with `addOperation(_:)` runs as a
/// ``DocumentQueueOperation`` — the presenter messages and reacquirers that coordinators deliver
/// there are blocks, and a coordinator waits for their answers, so a cancelled message would leave
/// it waiting forever. `cancelAllOperations()` therefore cancels only the `Operation` objects the
/// app added itself.
final class DocumentOperationQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: no state of its own; OperationQueue is thread-safe.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        addOperation(DocumentQueueOperation(block))
    }
}
