import FileCoordination
import Foundation

// The plumbing of the document's threading model (see "Threading" on `CloudDocument`):
// mutating the storage and announcing state changes in order, hopping onto the document queue,
// running lifecycle operations one after another, the editing-disabled count, the autosave timer.

/// Moves a value across a synchronous hop whose two sides never run at the same time.
final class HopBox<Value>: @unchecked Sendable {
    // @unchecked: written on one side of `addOperations(_:waitUntilFinished: true)` and read on
    // the other after the wait, which orders the accesses.
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A weak reference that can be captured by `@Sendable` closures.
struct WeakDocument: @unchecked Sendable {
    // @unchecked: the referent is Sendable; a weak reference is read atomically by the runtime.
    weak var document: CloudDocument?
}

extension CloudDocument {
    // MARK: Storage and announcements

    /// Mutates the storage under its lock. If the state changed, the change is queued for
    /// announcement (with the streams existing now) and an announcement pass is scheduled on
    /// the document queue. Any thread; `body` must not call out.
    @discardableResult
    func update<Result>(_ body: (inout DocumentStorage) throws -> Result) rethrows -> Result {
        let (result, changed) = try storage.withLock { storage in
            let before = storage.state
            let result = try body(&storage)
            guard storage.state != before else { return (result, false) }
            storage.announcements.append(StateAnnouncement(state: storage.state, recipients: Array(storage.streams.values)))
            return (result, true)
        }
        if changed {
            enqueueOnDocumentQueue { [self] in announcePendingStates() }
        }
        return result
    }

    /// Posts the queued state changes, oldest first: the notification, then each stream. On the
    /// document queue only. Not re-entered: a change made by an observer is announced by the
    /// loop after the current one, keeping the order.
    func announcePendingStates() {
        assertOnDocumentQueue()
        let alreadyRunning = storage.withLock { storage in
            if storage.isAnnouncing { return true }
            storage.isAnnouncing = true
            return false
        }
        guard !alreadyRunning else { return }
        while let next = storage.withLock({ $0.announcements.isEmpty ? nil : $0.announcements.removeFirst() }) {
            NotificationCenter.default.post(name: Self.stateChangedNotification, object: self,
                                            userInfo: [Self.stateUserInfoKey: next.state])
            for stream in next.recipients { stream.yield(next.state) }
        }
        storage.withLock { $0.isAnnouncing = false }
    }

    /// Blocks until every state change made so far has been announced. Not on the document queue
    /// (there it announces directly).
    func waitForAnnouncements() {
        // Nothing queued and nobody posting: everything is announced already (saves a queue hop,
        // the largest fixed cost of a save).
        let settled = storage.withLock { $0.announcements.isEmpty && !$0.isAnnouncing }
        if settled { return }
        onDocumentQueue { announcePendingStates() }
    }

    // MARK: The document queue

    /// Queues `work` on the document queue without waiting for it. The operation ignores
    /// `cancel()` (see ``DocumentQueueOperation``), so it runs even if the app cancels the
    /// queue's operations. Any thread.
    func enqueueOnDocumentQueue(_ work: @escaping @Sendable () -> Void) {
        presentedItemOperationQueue.addOperation(DocumentQueueOperation(work))
    }

    /// Runs `body` on the document queue and waits for it; runs it at once when already there.
    /// Call from background threads only (never while holding a lock the queue may need).
    ///
    /// The hop cannot be skipped: its operation ignores `cancel()` (``DocumentQueueOperation``),
    /// so `presentedItemOperationQueue.cancelAllOperations()` during a save or an open delays
    /// nothing and loses nothing.
    func onDocumentQueue<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let queue = presentedItemOperationQueue
        if OperationQueue.current === queue { return try body() }
        // The operation always runs (it ignores cancel()), so this loop goes round once; should
        // a Foundation ever skip it anyway, the hop is queued again rather than trapping.
        while true {
            let outcome: Swift.Result<T, E>? = withoutActuallyEscaping(body) { escapable in
                let work = HopBox<(() throws(E) -> T)?>(escapable)
                let outcome = HopBox<Swift.Result<T, E>?>(nil)
                let operation = DocumentQueueOperation {
                    guard let body = work.value else { return }
                    outcome.value = Swift.Result { () throws(E) -> T in try body() }
                }
                queue.addOperations([operation], waitUntilFinished: true)
                // The operation may outlive this call (queues release operations lazily): drop
                // the reference to the non-escaping closure now.
                work.value = nil
                return outcome.value
            }
            if let outcome { return try outcome.get() }
        }
    }

    /// Checks, in debug builds, that the caller runs on the lifecycle queue (open, close,
    /// autosave and revert run there, one after another).
    @inline(__always)
    func assertOnLifecycleQueue() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(lifecycleQueue))
        #endif
    }

    /// Checks, in debug builds, that the caller does not run on the document queue: work that
    /// waits for the queue (a save's snapshot, a load) would wait for itself there.
    @inline(__always)
    func assertNotOnDocumentQueue() {
        #if DEBUG
        dispatchPrecondition(condition: .notOnQueue(documentDispatchQueue))
        #endif
    }

    /// Checks, in debug builds, that the caller runs on the document queue (as swift-nio asserts
    /// its event loop). Used by the helpers that must only run there.
    @inline(__always)
    func assertOnDocumentQueue() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(documentDispatchQueue))
        #endif
    }

    /// ``onDocumentQueue(_:)`` when `condition` holds, otherwise `body` right here.
    func onDocumentQueueIf<T, E: Error>(_ condition: Bool, _ body: () throws(E) -> T) throws(E) -> T {
        condition ? try onDocumentQueue(body) : try body()
    }

    // MARK: Lifecycle serialization

    /// Runs `body` on the lifecycle queue after every lifecycle operation called before it, and
    /// returns its result. The calling task is suspended, not blocked.
    func lifecycleOperation<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            lifecycleQueue.async {
                continuation.resume(with: Swift.Result { try body() })
            }
        }
    }

    /// Runs `body` on the lifecycle queue like ``lifecycleOperation(_:)``, then calls `completion`
    /// with whether it succeeded on `queue` (default: the document's callback queue).
    func lifecycleOperation(queue: OperationQueue?, completion: (@Sendable (Bool) -> Void)?,
                            _ body: @escaping @Sendable () throws -> Void) {
        let callbacks = queue ?? callbackQueue
        lifecycleQueue.async {
            let succeeded = (try? body()) != nil
            if let completion { callbacks.addOperation { completion(succeeded) } }
        }
    }

    // MARK: Editing disabled

    /// Adds a reason for ``DocumentState/editingDisabled``; the first one sets the state, then calls
    /// ``disableEditing()``. On the document queue. Returns the session it applies to.
    @discardableResult
    func beginDisablingEditing() -> Int {
        assertOnDocumentQueue()
        let (session, first) = update { storage -> (Int, Bool) in
            storage.editingDisabledCount += 1
            guard storage.editingDisabledCount == 1 else { return (storage.session, false) }
            storage.state.insert(.editingDisabled)
            return (storage.session, true)
        }
        if first { disableEditing() }
        return session
    }

    /// Removes a reason added by ``beginDisablingEditing()`` in `session`; after the last one,
    /// calls ``enableEditing()`` then clears the state. Ignored when the document was closed (or
    /// reopened) since. On the document queue.
    func endDisablingEditing(session: Int) {
        assertOnDocumentQueue()
        let last = storage.withLock { storage -> Bool in
            guard storage.session == session, storage.editingDisabledCount > 0 else { return false }
            storage.editingDisabledCount -= 1
            return storage.editingDisabledCount == 0
        }
        guard last else { return }
        enableEditing()
        update { storage in
            if storage.session == session && storage.editingDisabledCount == 0 {
                storage.state.remove(.editingDisabled)
            }
        }
    }

    // MARK: Closing

    /// Makes the document closed at once: new session, state exactly ``DocumentState/closed``,
    /// autosave stopped, presenter unregistered, ``enableEditing()`` if editing was disabled.
    /// Does not save. On the document queue.
    func closeImmediately() {
        assertOnDocumentQueue()
        let (wasOpen, wasDisabled, timer) = update { storage -> (Bool, Bool, Task<Void, Never>?) in
            guard storage.isOpen else { return (false, false, nil) }
            let wasDisabled = storage.editingDisabledCount > 0
            storage.session += 1
            storage.state = .closed
            storage.editingDisabledCount = 0
            storage.progress = nil
            let timer = storage.autosaveTask
            storage.autosaveTask = nil
            return (true, wasDisabled, timer)
        }
        guard wasOpen else { return }
        timer?.cancel()
        Coordinator.removeFilePresenter(self)
        if wasDisabled { enableEditing() }
    }

    // MARK: Autosave timer

    /// Starts (or restarts, or stops) the periodic autosave according to ``autosaveInterval`` and
    /// whether the document is open. Any thread.
    func restartAutosaveTimer() {
        let weakSelf = WeakDocument(document: self)
        let old = storage.withLock { storage -> Task<Void, Never>? in
            let old = storage.autosaveTask
            storage.autosaveTask = nil
            if let interval = storage.autosaveInterval, interval > .zero, storage.isOpen {
                let session = storage.session
                storage.autosaveTask = Task.detached {
                    await Self.runAutosaveTimer(weakSelf, every: interval, session: session)
                }
            }
            return old
        }
        old?.cancel()
    }

    private static func runAutosaveTimer(_ reference: WeakDocument, every interval: Duration, session: Int) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            guard let document = reference.document else { return }
            let (current, dirty) = document.storage.withLock { ($0.session == session && $0.isOpen, $0.changes.hasUnsavedChanges) }
            guard current else { return }
            if dirty {
                // Failures were passed to handleError; the next period tries again.
                _ = try? await document.autosave()
            }
        }
    }

    // MARK: Coordinators

    /// A coordinator acting for this document, with ``coordinationTimeout``.
    func makeCoordinator() -> Coordinator {
        let coordinator = Coordinator(filePresenter: self)
        if let timeout = coordinationTimeout { coordinator.timeout = timeout }
        return coordinator
    }
}

