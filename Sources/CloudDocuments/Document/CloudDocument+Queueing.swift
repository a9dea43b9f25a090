import FileCoordination
import Foundation
import SystemSupport

// The plumbing of the document's threading model (see "Threading" on `CloudDocument`):
// mutating the storage and announcing state changes in order on the main actor, hopping onto the
// main actor from the file-access queue, running lifecycle operations one after another, the
// editing-disabled count, the autosave timer.

/// Moves a value across a synchronous hop whose two sides never run at the same time.
final class HopBox<Value>: @unchecked Sendable {
    // @unchecked: written on one side of a synchronous hop (`DispatchQueue.main.sync`, a
    // coordinated accessor) and read on the other after it returns, which orders the accesses.
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
    /// the main actor. Any thread; `body` must not call out.
    @discardableResult
    nonisolated func update<Result>(_ body: (inout DocumentStorage) throws -> Result) rethrows -> Result {
        let (result, changed) = try storage.withLock { storage in
            let before = storage.state
            let result = try body(&storage)
            guard storage.state != before else { return (result, false) }
            storage.announcements.append(StateAnnouncement(state: storage.state, recipients: Array(storage.streams.values)))
            return (result, true)
        }
        if changed {
            enqueueOnMainActor { [self] in announcePendingStates() }
        }
        return result
    }

    /// Posts the queued state changes, oldest first: the notification, then each stream. On the
    /// main actor. Not re-entered: a change made by an observer is announced by the loop after
    /// the current one, keeping the order.
    func announcePendingStates() {
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

    /// Blocks until every state change made so far has been announced. Off the main actor
    /// (on it, it announces directly).
    nonisolated func waitForAnnouncements() {
        // Nothing queued and nobody posting: everything is announced already (saves a hop to
        // the main actor, the largest fixed cost of a save).
        let settled = storage.withLock { $0.announcements.isEmpty && !$0.isAnnouncing }
        if settled { return }
        onMainActor { announcePendingStates() }
    }

    // MARK: The main actor

    /// Queues `work` on the main actor without waiting for it. Any thread.
    nonisolated func enqueueOnMainActor(_ work: @escaping @MainActor @Sendable () -> Void) {
        DispatchQueue.main.async { MainActor.assumeIsolated { work() } }
    }

    /// Runs `body` on the main actor and waits for it; runs it at once when already there. Call
    /// from the document's file-access threads only (never while holding a lock the main actor
    /// may need). The main thread must be running its queue (async `main`, a run loop, an app).
    nonisolated func onMainActor<T, E: Error>(_ body: @MainActor () throws(E) -> T) throws(E) -> T {
        storage.assertNotHeld("waiting for the main actor, whose hooks take the document's storage lock")
        let outcome = HopBox<Swift.Result<T, E>?>(nil)
        withoutActuallyEscaping(body) { body in
            let run = {
                MainActor.assumeIsolated {
                    outcome.value = Swift.Result { () throws(E) -> T in try body() }
                }
            }
            if MainQueueCheck.isMainQueue { run() } else { DispatchQueue.main.sync(execute: run) }
        }
        // `run` ran synchronously, exactly once, above: `outcome` is always set here.
        guard let outcome = outcome.value else { preconditionFailure("DispatchQueue.main.sync returned without running its block") }
        return try outcome.get()
    }

    /// Checks, in debug builds, that the caller runs on the lifecycle queue (open, close,
    /// autosave and revert run there, one after another).
    @inline(__always)
    nonisolated func assertOnLifecycleQueue() {
        ThreadAssertions.assertOnQueue(lifecycleQueue)
    }

    /// Checks, in debug builds, that the caller is off the main thread: work that waits for the
    /// main actor (a save's snapshot, a load) would wait for itself there.
    @inline(__always)
    nonisolated func assertNotOnMainThread() {
        ThreadAssertions.assertNotOnMainQueue()
    }

    // MARK: Lifecycle serialization

    /// Queues `body` on the lifecycle queue (the document's serial file-access queue), after
    /// everything queued there before, counting it in `pendingFileAccesses` while it is queued or
    /// running. Returns whether nothing else was queued or running when it was called. Any thread.
    @discardableResult
    nonisolated func enqueueFileAccess(_ body: @escaping @Sendable () -> Void) -> Bool {
        enqueueFileAccess(body, then: { _ in })
    }

    /// ``enqueueFileAccess(_:)`` that hands `body`'s result to `deliver` once the access no longer
    /// counts as pending, so that a caller resumed by `deliver` finds the document idle (and a
    /// save it starts right away takes its snapshot at once, in its own turn).
    @discardableResult
    nonisolated func enqueueFileAccess<T>(_ body: @escaping @Sendable () -> T,
                                          then deliver: @escaping @Sendable (T) -> Void) -> Bool {
        let wasIdle = storage.withLock { storage in
            defer { storage.pendingFileAccesses += 1 }
            return storage.pendingFileAccesses == 0
        }
        lifecycleQueue.async { [self] in
            let result = body()
            storage.withLock { $0.pendingFileAccesses -= 1 }
            deliver(result)
        }
        return wasIdle
    }

    /// Whether no lifecycle operation is queued or running. Any thread.
    nonisolated var fileAccessIsIdle: Bool { storage.withLock { $0.pendingFileAccesses == 0 } }

    /// Runs `body` on the lifecycle queue after every lifecycle operation called before it, and
    /// returns its result. The calling task is suspended, not blocked. Isolated to the main
    /// actor, so the operation is queued in the caller's turn (no hop to the global executor
    /// first), counted in `pendingFileAccesses` like ``enqueueFileAccess(_:)`` (no longer once the
    /// result is on its way back), and the result comes back straight to the main actor
    /// (`LifecycleRunner`: one thread switch each way, where a continuation took three).
    func lifecycleOperation<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        storage.withLock { $0.pendingFileAccesses += 1 }
        let storage = self.storage
        return try await LifecycleRunner(queue: lifecycleQueue).run(body, finish: {
            storage.withLock { $0.pendingFileAccesses -= 1 }
        })
    }

    /// Runs `body` on the lifecycle queue like ``lifecycleOperation(_:)``, then calls `completion`
    /// with whether it succeeded, on the main actor.
    nonisolated func lifecycleOperation(completion: (@MainActor @Sendable (Bool) -> Void)?,
                                        _ body: @escaping @Sendable () throws -> Void) {
        enqueueFileAccess({ (try? body()) != nil }, then: { [self] succeeded in
            if let completion { enqueueOnMainActor { completion(succeeded) } }
        })
    }

    // MARK: Editing disabled

    /// Adds a reason for ``DocumentState/editingDisabled``; the first one sets the state, then calls
    /// ``disableEditing()``. On the main actor. Returns the session it applies to.
    @discardableResult
    func beginDisablingEditing() -> Int {
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
    /// reopened) since. On the main actor.
    func endDisablingEditing(session: Int) {
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
    /// Does not save. Tells ``userInteractionNoLongerPermitted(forError:)`` about an error whose
    /// handling with the user has not finished. On the main actor.
    func closeImmediately() {
        let (wasOpen, wasDisabled, timer, awaitingUser) = update { storage -> (Bool, Bool, Task<Void, Never>?, (any Error)?) in
            let awaitingUser = storage.errorAwaitingUser
            guard storage.isOpen else { return (false, false, nil, awaitingUser) }
            let wasDisabled = storage.editingDisabledCount > 0
            storage.session += 1
            storage.state = .closed
            storage.editingDisabledCount = 0
            storage.progress = nil
            let timer = storage.autosaveTask
            storage.autosaveTask = nil
            return (true, wasDisabled, timer, awaitingUser)
        }
        if let awaitingUser { userInteractionNoLongerPermitted(forError: awaitingUser) }
        guard wasOpen else { return }
        timer?.cancel()
        unregisterAsPresenter()
        if wasDisabled { enableEditing() }
    }

    // MARK: Autosave timer

    /// Starts (or restarts, or stops) the periodic autosave according to ``autosaveInterval`` and
    /// whether the document is open. Any thread.
    nonisolated func restartAutosaveTimer() {
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

    nonisolated private static func runAutosaveTimer(_ reference: WeakDocument, every interval: Duration, session: Int) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            guard let document = reference.document else { return }
            let (current, dirty) = document.storage.withLock { ($0.session == session && $0.isOpen, $0.changes.hasUnsavedChanges) }
            guard current else { return }
            if dirty {
                // Failures were passed to handleError; the next period tries again.
                _ = await document.autosave()
            }
        }
    }

    // MARK: Coordinators and registration (in the document's runtime)

    /// A coordinator acting for this document, in its runtime, with ``coordinationTimeout``.
    nonisolated func makeCoordinator() -> Coordinator {
        let coordinator = Coordinator(filePresenter: self, runtime: runtime)
        if let timeout = coordinationTimeout { coordinator.timeout = timeout }
        return coordinator
    }

    /// Registers the document as the presenter of its file with its runtime's coordinators.
    nonisolated func registerAsPresenter() {
        runtime.addFilePresenter(self)
        startReportingUnsavedChanges()
    }

    /// Tells the runtime, now and at every change, whether the document has unsaved changes
    /// (other processes skip asking it to save while it has none: `CoordinationRuntime.presenter(_:hasUnsavedChanges:)`).
    /// After every registration: a new registration starts as "may have unsaved changes".
    nonisolated func startReportingUnsavedChanges() {
        let runtime = self.runtime
        storage.withLock { storage in
            storage.unsavedChangesReporter = { [weak self] dirty in
                guard let self else { return }
                runtime.presenter(self, hasUnsavedChanges: dirty)
            }
            storage.reportedUnsavedChanges = nil
            storage.reportUnsavedChanges()
        }
    }

    /// Unregisters the document from its runtime (nothing happens when it is not registered).
    nonisolated func unregisterAsPresenter() {
        runtime.removeFilePresenter(self)
    }

    /// Registers the document again under its current URL (after a save to another URL, a
    /// revert that read another one): the registry reads `presentedItemURL` when a presenter is
    /// added.
    nonisolated func reregisterAsPresenter() {
        runtime.removeFilePresenter(self)
        runtime.addFilePresenter(self)
        startReportingUnsavedChanges()
    }
}

