import Foundation

// Apple-style forms of the lifecycle operations. Each queues the same work as its async
// counterpart (serialized with every other lifecycle operation) and reports whether it succeeded.
//
// Where the completion handler runs: on `queue` when you pass one, otherwise on a private serial
// queue of the document (the same one for every call on that document, so completions arrive in
// the order the operations ran). Never on the main queue — Linux programs often have no main run
// loop — and never on the document queue. The error of a failed operation is in `lastError`
// (and was passed to `handleError(_:userInteractionPermitted:)`).
//
// Unlike Apple's, the completion handler is required: with an optional one, `document.open()`
// could silently pick this fire-and-forget form instead of the `async` one.

extension CloudDocument {
    /// ``open()`` with a completion handler called with `true` on success.
    public func open(queue: OperationQueue? = nil, completionHandler: @escaping @Sendable (Bool) -> Void) {
        lifecycleOperation(queue: queue, completion: completionHandler) { [self] in try performOpen() }
    }

    /// ``save(to:for:)`` with a completion handler called with `true` on success.
    public func save(to url: URL, for saveOperation: SaveOperation, queue: OperationQueue? = nil,
                     completionHandler: @escaping @Sendable (Bool) -> Void) {
        lifecycleOperation(queue: queue, completion: completionHandler) { [self] in
            try performSave(to: url, for: saveOperation, origin: .explicit)
        }
    }

    /// ``close()`` with a completion handler called with `true` on success (`false` when the save
    /// before closing failed; the document is then still open).
    public func close(queue: OperationQueue? = nil, completionHandler: @escaping @Sendable (Bool) -> Void) {
        lifecycleOperation(queue: queue, completion: completionHandler) { [self] in try performClose() }
    }

    /// ``revert(toContentsOf:)`` with a completion handler called with `true` on success.
    public func revert(toContentsOf url: URL, queue: OperationQueue? = nil,
                       completionHandler: @escaping @Sendable (Bool) -> Void) {
        lifecycleOperation(queue: queue, completion: completionHandler) { [self] in
            try performRevert(to: url, presenterSession: nil)
        }
    }

    /// ``autosave()`` with a completion handler called with `true` when it saved, `false` when
    /// there was nothing to save or the save failed.
    public func autosave(queue: OperationQueue? = nil, completionHandler: @escaping @Sendable (Bool) -> Void) {
        let callbacks = queue ?? callbackQueue
        lifecycleQueue.async { [self] in
            let saved = (try? performAutosave()) ?? false
            callbacks.addOperation { completionHandler(saved) }
        }
    }
}
