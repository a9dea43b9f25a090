import Foundation

// The public forms of the lifecycle operations, in Apple's shapes. Each operation has:
// - `async -> Bool` (Apple's async form): whether it succeeded; the error is in `lastError` and was
//   passed to `handleError(_:userInteractionPermitted:)`.
// - `…Throwing` (`openThrowing()`, `saveThrowing(to:for:)`, …): `async throws`, giving the error.
// - a completion handler that may be `nil`, called on the main actor. Its label is required
//   (no default), so `await document.open()` always means the `async` form and can never pick
//   the fire-and-forget one.
// All of them queue the same work, serialized (FIFO) with every other lifecycle operation.

extension CloudDocument {
    // MARK: Open

    /// Opens the document (see ``openThrowing()``); returns whether it succeeded. Apple's
    /// `open() async -> Bool`.
    @discardableResult
    public func open() async -> Bool {
        do { try await openThrowing(); return true } catch { return false }
    }

    /// Opens the document: reads the file (or package) at ``fileURL`` in a coordinated read with
    /// ``read(from:)`` (off the main actor; ``load(fromContents:ofType:)`` runs on it), registers
    /// the document as the file's presenter (inside the read, so no change slips by), sets
    /// ``fileModificationDate``, starts autosave if ``autosaveInterval`` is set, and makes the
    /// state ``DocumentState/normal``. Files of at least 1 MiB publish a ``progress`` while they
    /// are read (state `[closed, progressAvailable]`).
    ///
    /// Waits for the lifecycle operations called before it. When it returns, every state change
    /// it made has been announced.
    ///
    /// - Throws: ``DocumentError/documentAlreadyOpen``; ``DocumentError/fileNotFound(_:)``;
    ///   ``DocumentError/notReadable(_:underlying:errno:)`` (cannot be read, or neither a file nor a
    ///   folder); ``DocumentError/couldNotLoad(_:underlying:)`` when `load` throws; a
    ///   ``CoordinationError``. On failure the state stays ``DocumentState/closed``, the file is
    ///   untouched, the document is not registered as a presenter, and (except for
    ///   `documentAlreadyOpen`) ``handleError(_:userInteractionPermitted:)`` was called.
    public func openThrowing() async throws {
        try await lifecycleOperation { [self] in try performOpen() }
    }

    /// ``openThrowing()`` with a completion handler (or `nil`), called on the main actor with
    /// `true` on success.
    public func open(completionHandler: (@MainActor @Sendable (Bool) -> Void)?) {
        lifecycleOperation(completion: completionHandler) { [self] in try performOpen() }
    }

    // MARK: Save

    /// Saves the document (see ``saveThrowing(to:for:)``); returns whether it succeeded. Apple's
    /// `save(to:for:) async -> Bool`.
    @discardableResult
    public func save(to url: URL, for saveOperation: SaveOperation) async -> Bool {
        do { try await saveThrowing(to: url, for: saveOperation); return true } catch { return false }
    }

    /// Saves the document to `url`: takes a snapshot with ``contents(forType:)`` (type
    /// ``savingFileType``, or the type of `url`'s extension when it differs from ``fileURL``'s)
    /// and ``fileAttributesToWrite(to:for:)`` on the main actor, then, off the main actor inside a
    /// coordinated write of `url`, writes it with
    /// ``writeContents(_:andAttributes:safelyTo:for:)`` — by default ``SafeSave`` (temporary
    /// file, fsync, rename, fsync of the folder). Contents of at least 1 MiB publish a
    /// ``progress`` (state gains ``DocumentState/progressAvailable``).
    ///
    /// When no other lifecycle operation is queued, the snapshot is taken at once, as Apple's
    /// documents do; otherwise when the save's turn comes.
    ///
    /// On success: ``fileURL`` becomes `url` (the presenter registration follows), the version
    /// snapshotted is marked saved (changes made meanwhile stay unsaved), ``fileModificationDate``
    /// is updated and ``DocumentState/savingError`` is cleared. Saving a closed document (a new
    /// one) leaves it open, as with Apple's documents.
    ///
    /// - Throws: ``DocumentError/alreadyExists(_:)`` for ``SaveOperation/forCreating`` when
    ///   something is at `url` (left untouched); the ``SafeSave`` errors (disk full, folder
    ///   missing, not writable, …: the original is untouched); what `contents(forType:)` throws; a
    ///   ``CoordinationError``. Then the state of an open document gains
    ///   ``DocumentState/savingError`` and ``handleError(_:userInteractionPermitted:)`` is called
    ///   before this throws.
    public func saveThrowing(to url: URL, for saveOperation: SaveOperation) async throws {
        let prepared = fileAccessIsIdle ? prepareSave(to: url, for: saveOperation) : nil
        try await lifecycleOperation { [self] in
            try performSave(to: url, for: saveOperation, origin: .explicit, prepared: prepared)
        }
    }

    /// ``saveThrowing(to:for:)`` with a completion handler (or `nil`), called on the main actor
    /// with `true` on success.
    public func save(to url: URL, for saveOperation: SaveOperation,
                     completionHandler: (@MainActor @Sendable (Bool) -> Void)?) {
        let prepared = fileAccessIsIdle ? prepareSave(to: url, for: saveOperation) : nil
        lifecycleOperation(completion: completionHandler) { [self] in
            try performSave(to: url, for: saveOperation, origin: .explicit, prepared: prepared)
        }
    }

    // MARK: Close

    /// Closes the document (see ``closeThrowing()``); returns whether it succeeded. Apple's
    /// `close() async -> Bool`.
    @discardableResult
    public func close() async -> Bool {
        do { try await closeThrowing(); return true } catch { return false }
    }

    /// Closes the document: saves unsaved changes first (to ``fileURL``, overwriting), then stops
    /// autosave, unregisters the presenter and makes the state exactly ``DocumentState/closed``.
    /// Closing a closed document does nothing.
    ///
    /// - Throws: The save's error: the document then stays open, with
    ///   ``DocumentState/savingError``, and its changes are kept.
    public func closeThrowing() async throws {
        try await lifecycleOperation { [self] in try performClose() }
    }

    /// ``closeThrowing()`` with a completion handler (or `nil`), called on the main actor with
    /// `true` on success (`false` when the save before closing failed; the document is then
    /// still open).
    public func close(completionHandler: (@MainActor @Sendable (Bool) -> Void)?) {
        lifecycleOperation(completion: completionHandler) { [self] in try performClose() }
    }

    // MARK: Revert

    /// Reverts the document (see ``revertThrowing(toContentsOf:)``); returns whether it
    /// succeeded. Apple's `revert(toContentsOf:) async -> Bool`.
    @discardableResult
    public func revert(toContentsOf url: URL) async -> Bool {
        do { try await revertThrowing(toContentsOf: url); return true } catch { return false }
    }

    /// Discards unsaved changes and reloads the document from `url` (usually ``fileURL``): state
    /// ``DocumentState/editingDisabled`` (and ``disableEditing()``) during the coordinated read,
    /// ``read(from:)``, then the undo stack is emptied, the document has no unsaved changes,
    /// ``DocumentState/savingError`` is cleared, ``fileURL`` becomes `url`.
    ///
    /// - Throws: ``DocumentError/documentClosed``; the errors of ``openThrowing()``. On failure
    ///   the document keeps its contents, unsaved changes, URL and state.
    public func revertThrowing(toContentsOf url: URL) async throws {
        try await lifecycleOperation { [self] in try performRevert(to: url, presenterSession: nil) }
    }

    /// ``revertThrowing(toContentsOf:)`` with a completion handler (or `nil`), called on the main
    /// actor with `true` on success.
    public func revert(toContentsOf url: URL, completionHandler: (@MainActor @Sendable (Bool) -> Void)?) {
        lifecycleOperation(completion: completionHandler) { [self] in
            try performRevert(to: url, presenterSession: nil)
        }
    }

    // MARK: Autosave

    /// Saves (overwriting ``fileURL``) if the document is open and has unsaved changes; returns
    /// whether it saved (`false` when there was nothing to save or the save failed). A lifecycle
    /// operation, so it never overlaps another save.
    @discardableResult
    public func autosave() async -> Bool {
        (try? await autosaveThrowing()) ?? false
    }

    /// ``autosave()``, giving the error.
    ///
    /// - Throws: The save's error (see ``saveThrowing(to:for:)``);
    ///   ``handleError(_:userInteractionPermitted:)`` is called with
    ///   `userInteractionPermitted: false` first.
    @discardableResult
    public func autosaveThrowing() async throws -> Bool {
        try await lifecycleOperation { [self] in try performAutosave() }
    }

    /// ``autosave()`` with a completion handler (or `nil`), called on the main actor with `true`
    /// when it saved, `false` when there was nothing to save or the save failed.
    public func autosave(completionHandler: (@MainActor @Sendable (Bool) -> Void)?) {
        enqueueFileAccess({ [self] in (try? performAutosave()) ?? false }, then: { [self] saved in
            if let completionHandler { enqueueOnMainActor { completionHandler(saved) } }
        })
    }
}
