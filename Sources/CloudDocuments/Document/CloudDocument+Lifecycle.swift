import FileCoordination
import Foundation

// Open, save, close, revert and autosave. The public async methods queue the blocking
// implementations (`perform…`) on the lifecycle queue; see "Threading" on `CloudDocument`.

extension CloudDocument {
    /// Who asked for a save: decides whether the user may be involved in error handling and
    /// whether saving a closed document is allowed.
    enum SaveOrigin: Sendable, Equatable {
        /// `save(to:for:)`: may save a closed document (which then becomes open).
        case explicit
        /// `autosave()` and the autosave timer; only while open.
        case autosave
        /// `close()`, before closing; only while open.
        case close
        /// `savePresentedItemChanges`, for the coordinator that asked; only in `session`.
        case presenter(session: Int)

        var userInteractionPermitted: Bool { self == .explicit || self == .close }
    }

    // MARK: Public async API

    /// Opens the document: reads the file (or package) at ``fileURL`` in a coordinated read, hands
    /// it to ``load(fromContents:ofType:)`` on the document queue, registers the document as the
    /// file's presenter (inside the read, so no change slips by), sets
    /// ``fileModificationDate``, starts autosave if ``autosaveInterval`` is set, and makes the
    /// state ``DocumentState/normal``. Files of at least 1 MiB publish a ``progress`` while
    /// they are read (state `[closed, progressAvailable]`).
    ///
    /// Waits for the lifecycle operations called before it. When it returns, every state change
    /// it made has been announced.
    ///
    /// - Throws: ``DocumentError/documentAlreadyOpen``; ``DocumentError/fileNotFound(_:)``;
    ///   ``DocumentError/notReadable(_:underlying:)`` (cannot be read, or neither a file nor a
    ///   folder); ``DocumentError/couldNotLoad(_:underlying:)`` when `load` throws; a
    ///   ``CoordinationError``. On failure the state stays ``DocumentState/closed``, the file is
    ///   untouched, the document is not registered as a presenter, and (except for
    ///   `documentAlreadyOpen`) ``handleError(_:userInteractionPermitted:)`` was called.
    public func open() async throws {
        try await lifecycleOperation { [self] in try performOpen() }
    }

    /// Saves the document to `url`: takes a snapshot with ``contents(forType:)`` (type
    /// ``savingFileType``, or the type of `url`'s extension when it differs from ``fileURL``'s) on the document queue inside a coordinated write of `url`, and writes it
    /// with ``SafeSave`` (temporary file, fsync, rename, fsync of the folder). Contents of at least
    /// 1 MiB publish a ``progress`` (state gains ``DocumentState/progressAvailable``).
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
    public func save(to url: URL, for saveOperation: SaveOperation) async throws {
        try await lifecycleOperation { [self] in try performSave(to: url, for: saveOperation, origin: .explicit) }
    }

    /// Closes the document: saves unsaved changes first (to ``fileURL``, overwriting), then stops
    /// autosave, unregisters the presenter and makes the state exactly ``DocumentState/closed``.
    /// Closing a closed document does nothing.
    ///
    /// - Throws: The save's error: the document then stays open, with
    ///   ``DocumentState/savingError``, and its changes are kept.
    public func close() async throws {
        try await lifecycleOperation { [self] in try performClose() }
    }

    /// Discards unsaved changes and reloads the document from `url` (usually ``fileURL``): state
    /// ``DocumentState/editingDisabled`` (and ``disableEditing()``) during the coordinated read,
    /// ``load(fromContents:ofType:)``, then the undo stack is emptied, the document has no unsaved
    /// changes, ``DocumentState/savingError`` is cleared, ``fileURL`` becomes `url`.
    ///
    /// - Throws: ``DocumentError/documentClosed``; the errors of ``open()``. On failure the document
    ///   keeps its contents, unsaved changes, URL and state.
    public func revert(toContentsOf url: URL) async throws {
        try await lifecycleOperation { [self] in try performRevert(to: url, presenterSession: nil) }
    }

    /// Saves (overwriting ``fileURL``) if the document is open and has unsaved changes; returns
    /// whether it saved. A lifecycle operation, so it never overlaps another save.
    ///
    /// - Throws: The save's error (see ``save(to:for:)``); ``handleError(_:userInteractionPermitted:)``
    ///   is called with `userInteractionPermitted: false` first.
    @discardableResult
    public func autosave() async throws -> Bool {
        try await lifecycleOperation { [self] in try performAutosave() }
    }

    // MARK: Open

    func performOpen() throws {
        assertOnLifecycleQueue()
        let url = try storage.withLock { storage throws(DocumentError) -> URL in
            guard !storage.isOpen else { throw .documentAlreadyOpen }
            return storage.fileURL
        }
        let type = TypeIdentifiers.typeIdentifier(for: url)
        let coordinator = makeCoordinator()
        let progressBox = HopBox<Progress?>(nil)
        do {
            try coordinator.coordinate(readingItemAt: url) { readURL in
                // Temporary files of saves killed midway (see StrayTemporaryFiles).
                StrayTemporaryFiles.reclaim(besideItemAt: readURL)
                let (contents, identity) = try DocumentReader.read(at: readURL, documentURL: url) { size in
                    startProgress(totalBytes: size, into: progressBox)
                }
                try onDocumentQueue { () throws -> Void in
                    do {
                        try load(fromContents: contents, ofType: type)
                    } catch {
                        throw DocumentError.couldNotLoad(url, underlying: error)
                    }
                    update { storage in
                        storage.fileURL = readURL
                        storage.session += 1
                        storage.state = .normal
                        storage.changes.reset()
                        storage.diskIdentity = identity
                        storage.fileModificationDate = identity.modificationDate
                        storage.editingDisabledCount = 0
                        storage.progress = nil
                    }
                }
                Coordinator.addFilePresenter(self)
            }
        } catch {
            endProgress(progressBox.value)
            report(error, userInteractionPermitted: true)
            waitForAnnouncements()
            throw error
        }
        restartAutosaveTimer()
        waitForAnnouncements()
    }

    // MARK: Save

    /// The snapshot a save writes.
    private struct Snapshot {
        var contents: DocumentContents
        var token: UInt64
        var progress: Progress?
    }

    func performSave(to url: URL, for operation: SaveOperation, origin: SaveOrigin) throws {
        assertNotOnDocumentQueue()
        let start = storage.withLock { (session: $0.session, wasOpen: $0.isOpen) }
        let type = savingType(for: url)
        let progressBox = HopBox<Progress?>(nil)
        let opened = HopBox(false)
        do {
            if case .presenter(let session) = origin, session != start.session { throw DocumentError.documentClosed }
            if origin != .explicit && !start.wasOpen { throw DocumentError.documentClosed }
            let coordinator = makeCoordinator()
            try coordinator.coordinate(writingItemAt: url) { target in
                saveLock.lock()
                defer { saveLock.unlock() }
                let snapshot = try onDocumentQueue { () throws -> Snapshot in
                    let (session, isOpen, token, threshold) = storage.withLock {
                        ($0.session, $0.isOpen, $0.changes.token, $0.progressThreshold)
                    }
                    // Closed (by a deletion, or by close) since the save was asked for: do not
                    // write the file again.
                    guard session == start.session, isOpen == start.wasOpen else { throw DocumentError.documentClosed }
                    // The token is read before the snapshot: a change made while `contents`
                    // runs counts as unsaved.
                    let contents = try self.contents(forType: type)
                    if contents.byteCount >= threshold {
                        startProgress(totalBytes: Int64(contents.byteCount), into: progressBox)
                    }
                    return Snapshot(contents: contents, token: token, progress: progressBox.value)
                }
                let reporter = progressReporter(for: snapshot.progress)
                try SafeSave.write(snapshot.contents, to: target, for: operation, progress: reporter)
                let identity = DiskIdentity.of(target)
                // With progress: on the document queue, after the announcement of
                // progressAvailable, so an observer of that announcement still finds the progress
                // published. Without: at once.
                let (oldURL, becameOpen) = onDocumentQueueIf(snapshot.progress != nil) { update { storage -> (URL, Bool) in
                    let oldURL = storage.fileURL
                    storage.fileURL = target
                    storage.changes.markSaved(snapshot.token)
                    storage.diskIdentity = identity
                    if let identity { storage.fileModificationDate = identity.modificationDate }
                    storage.state.remove(.savingError)
                    if let progress = snapshot.progress, storage.progress === progress {
                        storage.progress = nil
                        storage.state.remove(.progressAvailable)
                    }
                    guard !storage.isOpen else { return (oldURL, false) }
                    // A new document saved for the first time is open from now on.
                    storage.session += 1
                    storage.state.remove(.closed)
                    storage.editingDisabledCount = 0
                    return (oldURL, true)
                } }
                // Re-register under the new URL while the write lock is still held.
                if becameOpen {
                    opened.value = true
                    Coordinator.addFilePresenter(self)
                } else if oldURL.standardizedFileURL != target.standardizedFileURL {
                    Coordinator.removeFilePresenter(self)
                    Coordinator.addFilePresenter(self)
                }
            }
        } catch {
            endProgress(progressBox.value)
            update { storage in
                if storage.session == start.session && storage.isOpen { storage.state.insert(.savingError) }
            }
            report(error, userInteractionPermitted: origin.userInteractionPermitted)
            notifySaveObserver(.failure(error))
            waitForAnnouncements()
            throw error
        }
        if opened.value { restartAutosaveTimer() }
        notifySaveObserver(.success(url))
        waitForAnnouncements()
    }

    // MARK: Autosave and close

    func performAutosave() throws -> Bool {
        assertOnLifecycleQueue()
        let (isOpen, dirty, url) = storage.withLock { ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL) }
        guard isOpen, dirty else { return false }
        try performSave(to: url, for: .forOverwriting, origin: .autosave)
        return true
    }

    func performClose() throws {
        assertOnLifecycleQueue()
        let (isOpen, dirty, url) = storage.withLock { ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL) }
        guard isOpen else { return }
        if dirty {
            try performSave(to: url, for: .forOverwriting, origin: .close)
        }
        onDocumentQueue { closeImmediately() }
        waitForAnnouncements()
    }

    // MARK: Revert

    /// Reverts to `url`. `presenterSession` is set for the reload that follows another writer's
    /// change: then the reason for ``DocumentState/editingDisabled`` was added when the change was
    /// announced, the reload is skipped when the file is still what the document last read or
    /// wrote, or when the document has unsaved changes by the time it would load; failures are
    /// only reported to ``handleError(_:userInteractionPermitted:)``.
    func performRevert(to url: URL, presenterSession: Int?) throws {
        assertOnLifecycleQueue()
        let session: Int
        if let presenterSession {
            session = presenterSession
            guard storage.withLock({ $0.session == presenterSession && $0.isOpen }) else { return }
        } else {
            guard storage.withLock({ $0.isOpen }) else { throw DocumentError.documentClosed }
            session = onDocumentQueue { beginDisablingEditing() }
        }
        defer {
            onDocumentQueue { endDisablingEditing(session: session) }
            waitForAnnouncements()
        }
        let type = TypeIdentifiers.typeIdentifier(for: url)
        let progressBox = HopBox<Progress?>(nil)
        do {
            try makeCoordinator().coordinate(readingItemAt: url) { readURL in
                if presenterSession != nil {
                    // Unchanged since we last read or wrote it, or gone: nothing to reload.
                    let known = storage.withLock { $0.diskIdentity }
                    guard let current = DiskIdentity.of(readURL), current != known else { return }
                }
                let (contents, identity) = try DocumentReader.read(at: readURL, documentURL: url) { size in
                    startProgress(totalBytes: size, into: progressBox)
                }
                let (loaded, oldURL) = try onDocumentQueue { () throws -> (Bool, URL) in
                    let (current, dirty, oldURL) = storage.withLock {
                        ($0.session == session && $0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL)
                    }
                    guard current else { throw DocumentError.documentClosed }
                    // A reload for another writer keeps edits made since it was scheduled
                    // (conflicts are a later layer's business).
                    if presenterSession != nil && dirty { return (false, oldURL) }
                    do {
                        try load(fromContents: contents, ofType: type)
                    } catch {
                        throw DocumentError.couldNotLoad(url, underlying: error)
                    }
                    undoManager.removeAllActions()
                    update { storage in
                        storage.fileURL = readURL
                        storage.changes.reset()
                        storage.diskIdentity = identity
                        storage.fileModificationDate = identity.modificationDate
                        storage.state.remove(.savingError)
                    }
                    return (true, oldURL)
                }
                if loaded && oldURL.standardizedFileURL != readURL.standardizedFileURL {
                    Coordinator.removeFilePresenter(self)
                    Coordinator.addFilePresenter(self)
                }
            }
            endProgress(progressBox.value)
        } catch {
            endProgress(progressBox.value)
            if presenterSession != nil, case DocumentError.documentClosed = error { return }
            report(error, userInteractionPermitted: presenterSession == nil)
            throw error
        }
    }

    // MARK: Helpers

    /// The type a save to `url` passes to ``contents(forType:)``: ``savingFileType`` when `url` has
    /// the same extension as ``fileURL``, otherwise the type of `url`'s extension (so saving
    /// `photo.png` to `photo.ppm` converts).
    func savingType(for url: URL) -> String {
        if url.pathExtension.lowercased() == fileURL.pathExtension.lowercased() {
            return savingFileType ?? fileType ?? TypeIdentifiers.data
        }
        return TypeIdentifiers.typeIdentifier(for: url)
    }

    /// Publishes a progress for `totalBytes` if that reaches the threshold (state gains
    /// ``DocumentState/progressAvailable``), storing it in `box`; returns the function that
    /// reports bytes done. Any thread.
    @discardableResult
    func startProgress(totalBytes: Int64, into box: HopBox<Progress?>) -> ((Int64) -> Void)? {
        let threshold = storage.withLock { $0.progressThreshold }
        guard totalBytes >= Int64(threshold) else { return nil }
        let progress = Progress(totalUnitCount: totalBytes)
        box.value = progress
        update { storage in
            storage.progress = progress
            storage.state.insert(.progressAvailable)
        }
        return progressReporter(for: progress)
    }

    /// A function that advances `progress` to a byte count, on the document queue.
    private func progressReporter(for progress: Progress?) -> ((Int64) -> Void)? {
        guard let progress else { return nil }
        let reference = ProgressReference(progress: progress)
        return { [self] done in
            enqueueOnDocumentQueue { reference.progress.completedUnitCount = done }
        }
    }

    /// Withdraws `progress` if it is still the published one. On the document queue (waiting for
    /// it), so that observers of its announcement still find it published. Not on that queue.
    func endProgress(_ progress: Progress?) {
        guard let progress else { return }
        let reference = ProgressReference(progress: progress)
        onDocumentQueue {
            update { storage in
                guard storage.progress === reference.progress else { return }
                storage.progress = nil
                storage.state.remove(.progressAvailable)
            }
        }
    }

    /// Records `error` as ``lastError`` and calls ``handleError(_:userInteractionPermitted:)`` on
    /// the document queue (waiting for it). Misuse errors (already open, closed) are only thrown.
    func report(_ error: any Error, userInteractionPermitted: Bool) {
        if let documentError = error as? DocumentError {
            switch documentError {
            case .documentAlreadyOpen, .documentClosed: return
            default: break
            }
        }
        storage.withLock { $0.lastError = error }
        onDocumentQueue { handleError(error, userInteractionPermitted: userInteractionPermitted) }
    }

    private func notifySaveObserver(_ outcome: Result<URL, any Error>) {
        guard let observer = storage.withLock({ $0.saveObserver }) else { return }
        onDocumentQueue { observer(outcome) }
    }
}

/// Lets a `Progress` be captured by a `@Sendable` closure that only touches it on the document queue.
struct ProgressReference: @unchecked Sendable {
    // @unchecked: the progress is mutated only on the document queue.
    let progress: Progress
}
