import FileCoordination
import Foundation
import SystemSupport

// Open, save, close, revert and autosave: the blocking implementations (`perform…`), which run on
// the lifecycle queue (the document's serial file-access queue) and hop to the main actor only
// for the hooks. The public forms are in CloudDocument+Operations.swift.

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

        /// Explicit saves, autosaves and closes run on the lifecycle queue, one at a time;
        /// presenter saves on the presenter save queue (or a thread of their own).
        var runsOnLifecycleQueue: Bool {
            if case .presenter = self { return false }
            return true
        }
    }

    /// The open session a save started in, and whether the document was open then.
    struct SaveStart: Sendable {
        var session: Int
        var wasOpen: Bool
        /// The document's file when the save was asked for: a save to it is a save over the
        /// document's own file even if a move notice changes ``fileURL`` before the save's check.
        var fileURL: URL
    }

    /// The snapshot a save writes, taken on the main actor.
    struct Snapshot: @unchecked Sendable {
        // @unchecked: `progress` is only mutated on the main actor (ProgressReference); the
        // other fields are Sendable values.
        var contents: DocumentContents
        var attributes: [FileAttributeKey: any Sendable]
        var token: UInt64
        var progress: Progress?
        /// What the document knew of the file when the snapshot was taken: a snapshot taken
        /// before another save (or a reload) of this document is stale, even with the same token
        /// (a merge changes the text, not the token).
        var knownIdentity: DiskIdentity? = nil
    }

    /// A snapshot taken on the main actor before the save was queued (when nothing else was
    /// queued: then no other lifecycle operation can run between the two), saving a hop.
    struct PreparedSave: Sendable {
        var start: SaveStart
        var snapshot: Swift.Result<Snapshot, any Error>
    }

    // MARK: Open

    nonisolated func performOpen() throws {
        assertOnLifecycleQueue()
        let url = try storage.withLock { storage throws(DocumentError) -> URL in
            guard !storage.isOpen else { throw .documentAlreadyOpen }
            return storage.fileURL
        }
        let request = ReadRequest(documentURL: url, type: TypeIdentifiers.typeIdentifier(for: url))
        do {
            try makeCoordinator().coordinate(readingItemAt: url) { readURL in
                // Temporary files of saves killed midway (see StrayTemporaryFiles).
                StrayTemporaryFiles.reclaim(besideItemAt: readURL)
                let itemIdentity = ItemIdentityAttribute.read(PathBytes.path(of: readURL))
                request.onLoaded = { [self] identity in
                    update { storage in
                        storage.fileURL = readURL
                        storage.locations.reset(to: readURL)
                        storage.itemIdentity = itemIdentity
                        storage.session += 1
                        storage.state = .normal
                        storage.changes.reset()
                        storage.diskIdentity = identity
                        storage.fileModificationDate = identity?.modificationDate
                        storage.editingDisabledCount = 0
                        storage.progress = nil
                    }
                }
                try read(readURL, with: request)
                registerAsPresenter()
            }
        } catch {
            endProgress(request.progress.value)
            report(error, userInteractionPermitted: true)
            waitForAnnouncements()
            throw error
        }
        restartAutosaveTimer()
        refreshConflictState()
        waitForAnnouncements()
    }

    /// Calls ``read(from:)`` with `request` installed (so its default, or an override's call of
    /// ``loadOnMainActor(_:ofType:)``, applies it); fails when no load happened.
    nonisolated func read(_ url: URL, with request: ReadRequest) throws {
        request.readURL = url
        storage.withLock { $0.readRequest = request }
        defer { storage.withLock { $0.readRequest = nil } }
        try read(from: url)
        guard request.loaded.value else {
            if request.skipped.value { return }
            throw DocumentError.couldNotLoad(request.documentURL, underlying: DocumentError.contentsInvalid("read(from:) did not load any contents"))
        }
    }

    // MARK: Save

    /// Takes the snapshot a save to `url` writes: ``contents(forType:)`` and
    /// ``fileAttributesToWrite(to:for:)``, with the change token read before them (a change made
    /// while they run counts as unsaved). Publishes a progress for large contents.
    func takeSnapshot(to url: URL, for operation: SaveOperation, start: SaveStart) throws -> Snapshot {
        let (session, isOpen, token, threshold, known) = storage.withLock {
            ($0.session, $0.isOpen, $0.changes.token, $0.progressThreshold, $0.diskIdentity)
        }
        // Closed (by a deletion, or by close) since the save was asked for: do not write the
        // file again.
        guard session == start.session, isOpen == start.wasOpen else { throw DocumentError.documentClosed }
        let contents = try self.contents(forType: savingType(for: url))
        let attributes = try fileAttributesToWrite(to: url, for: operation)
        let progressBox = HopBox<Progress?>(nil)
        if contents.byteCount >= threshold {
            startProgress(totalBytes: Int64(contents.byteCount), into: progressBox)
        }
        return Snapshot(contents: contents, attributes: attributes, token: token, progress: progressBox.value, knownIdentity: known)
    }

    /// Takes the snapshot now, on the main actor, for a save about to be queued.
    func prepareSave(to url: URL, for operation: SaveOperation) -> PreparedSave {
        let start = storage.withLock { SaveStart(session: $0.session, wasOpen: $0.isOpen, fileURL: $0.fileURL) }
        return PreparedSave(start: start, snapshot: Swift.Result { try takeSnapshot(to: url, for: operation, start: start) })
    }

    // MARK: Autosave and close

    nonisolated func performAutosave() throws -> Bool {
        assertOnLifecycleQueue()
        let (isOpen, dirty, url) = storage.withLock { ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL) }
        guard isOpen, dirty else { return false }
        do {
            try performSave(to: url, for: .forOverwriting, origin: .autosave)
        } catch DocumentError.documentClosed where !storage.withLock({ $0.isOpen }) {
            // Closed meanwhile (another program's coordinated delete of the file): nothing to
            // autosave any more, which is no failure.
            return false
        }
        return true
    }

    nonisolated func performClose() throws {
        assertOnLifecycleQueue()
        let (isOpen, dirty, url) = storage.withLock { ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL) }
        guard isOpen else { return }
        if dirty {
            do {
                try performSave(to: url, for: .forOverwriting, origin: .close)
            } catch DocumentError.documentClosed where !storage.withLock({ $0.isOpen }) {
                // Closed meanwhile (another program's coordinated delete of the file, whose
                // changes went with it): what was asked is done.
                return
            }
        }
        onMainActor { closeImmediately() }
        waitForAnnouncements()
    }

    // MARK: Revert

    /// Reverts to `url`. `presenterSession` is set for the reload that follows another writer's
    /// change: then the reason for ``DocumentState/editingDisabled`` was added when the change was
    /// announced, the reload is skipped when the file is still what the document last read or
    /// wrote, or when the document has unsaved changes by the time it would load; failures are
    /// only reported to ``handleError(_:userInteractionPermitted:)``.
    nonisolated func performRevert(to url: URL, presenterSession: Int?) throws {
        assertOnLifecycleQueue()
        let session: Int
        if let presenterSession {
            session = presenterSession
            guard storage.withLock({ $0.session == presenterSession && $0.isOpen }) else { return }
        } else {
            guard storage.withLock({ $0.isOpen }) else { throw DocumentError.documentClosed }
            session = onMainActor { beginDisablingEditing() }
        }
        defer {
            onMainActor { endDisablingEditing(session: session) }
            waitForAnnouncements()
        }
        let request = ReadRequest(documentURL: url, type: TypeIdentifiers.typeIdentifier(for: url))
        // A reload for another program's change reads what is on disk now, without asking
        // other presenters to save first (`.withoutChanges`, as Apple's documentation suggests
        // for a presenter refreshing itself): the writer that announced the change has just
        // saved, and an edit still unsaved elsewhere is announced again when it is saved. An
        // explicit revert asks, as any read does.
        let options: Coordinator.ReadingOptions = presenterSession != nil ? .withoutChanges : []
        do {
            try makeCoordinator().coordinate(readingItemAt: url, options: options) { readURL in
                // This read shares the document's lock owner with its saves, so it does not wait
                // for a save's write lock: `saveLock` keeps it out of a save under way (otherwise
                // a reload landing between a save's snapshot check and its merge made the merge
                // take the reloaded text for the common ancestor and drop the other program's lines).
                saveLock.lock()
                defer { saveLock.unlock() }
                if presenterSession != nil {
                    // Unchanged since we last read or wrote it, or gone: nothing to reload.
                    let known = storage.withLock { $0.diskIdentity }
                    guard let current = DiskIdentity.of(readURL), current != known else { return }
                }
                let oldURL = HopBox<URL?>(nil)
                request.check = { [self] in
                    let (current, dirty) = storage.withLock {
                        ($0.session == session && $0.isOpen, $0.changes.hasUnsavedChanges)
                    }
                    guard current else { throw DocumentError.documentClosed }
                    // A reload for another writer keeps edits made since it was scheduled
                    // (conflicts are a later layer's business).
                    return !(presenterSession != nil && dirty)
                }
                let itemIdentity = ItemIdentityAttribute.read(PathBytes.path(of: readURL))
                request.onLoaded = { [self] identity in
                    undoManager.removeAllActions()
                    update { storage in
                        oldURL.value = storage.fileURL
                        storage.fileURL = readURL
                        storage.locations.moved(to: readURL)
                        if let itemIdentity { storage.itemIdentity = itemIdentity }
                        storage.changes.reset()
                        storage.diskIdentity = identity
                        if let identity { storage.fileModificationDate = identity.modificationDate }
                        storage.state.remove(.savingError)
                    }
                }
                try read(readURL, with: request)
                if let old = oldURL.value, old.standardizedFileURL != readURL.standardizedFileURL {
                    reregisterAsPresenter()
                }
            }
            endProgress(request.progress.value)
        } catch {
            endProgress(request.progress.value)
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
        let current = fileURL
        // Equal URLs (a save in place, the usual case) need no parsing of extensions.
        if url == current || url.pathExtension.lowercased() == current.pathExtension.lowercased() {
            return savingFileType ?? fileType ?? TypeIdentifiers.data
        }
        return TypeIdentifiers.typeIdentifier(for: url)
    }

    /// Publishes a progress for `totalBytes` if that reaches the threshold (state gains
    /// ``DocumentState/progressAvailable``), storing it in `box`; returns the function that
    /// reports bytes done. Any thread.
    @discardableResult
    nonisolated func startProgress(totalBytes: Int64, into box: HopBox<Progress?>) -> (@Sendable (Int64) -> Void)? {
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

    /// A function that advances `progress` to a byte count, on the main actor.
    nonisolated func progressReporter(for progress: Progress?) -> (@Sendable (Int64) -> Void)? {
        guard let progress else { return nil }
        let reference = ProgressReference(progress: progress)
        return { [self] done in
            enqueueOnMainActor { reference.progress.completedUnitCount = done }
        }
    }

    /// Withdraws `progress` if it is still the published one. On the main actor (waiting for
    /// it), so that observers of its announcement still find it published. Not on the main thread.
    nonisolated func endProgress(_ progress: Progress?) {
        guard let progress else { return }
        let reference = ProgressReference(progress: progress)
        onMainActor {
            update { storage in
                guard storage.progress === reference.progress else { return }
                storage.progress = nil
                storage.state.remove(.progressAvailable)
            }
        }
    }

    /// Records `error` as ``lastError`` and calls ``handleError(_:userInteractionPermitted:)`` on
    /// the main actor (waiting for it). Misuse errors (already open, closed) are only thrown.
    nonisolated func report(_ error: any Error, userInteractionPermitted: Bool) {
        if let documentError = error as? DocumentError {
            switch documentError {
            case .documentAlreadyOpen, .documentClosed: return
            default: break
            }
        }
        storage.withLock { storage in
            storage.lastError = error
            if userInteractionPermitted { storage.errorAwaitingUser = error }
        }
        onMainActor { handleError(error, userInteractionPermitted: userInteractionPermitted) }
    }
}

/// Lets a `Progress` be captured by a `@Sendable` closure that only touches it on the main actor.
struct ProgressReference: @unchecked Sendable {
    // @unchecked: the progress is mutated only on the main actor.
    let progress: Progress
}

/// What an open or a revert asks of ``CloudDocument/read(from:)``: which URL to name in errors,
/// the type to load, a check made on the main actor right before `load` (for reloads: still the
/// same session, no unsaved changes), and the storage update made in the same main-actor turn
/// right after it.
final class ReadRequest: @unchecked Sendable {
    // @unchecked: `readURL`, `check` and `onLoaded` are set on the lifecycle thread before `read(from:)` is
    // called and only read by it (or by the main-actor hop it waits for); the boxes follow
    // HopBox's rule.
    let documentURL: URL
    let type: String?
    /// The URL actually read (the coordinator's, which may differ from `documentURL` after a move).
    var readURL: URL?
    /// Returns `false` to skip the load (a reload made pointless meanwhile); throws to fail.
    var check: @MainActor @Sendable () throws -> Bool = { true }
    var onLoaded: @MainActor @Sendable (DiskIdentity?) -> Void = { _ in }
    let progress = HopBox<Progress?>(nil)
    let loaded = HopBox(false)
    let skipped = HopBox(false)

    init(documentURL: URL, type: String?) {
        self.documentURL = documentURL
        self.type = type
    }
}

extension CloudDocument {
    // Inside a save's coordinated write of the document's own file, the document keeps the
    // file's version-store identity (`ItemIdentityAttribute`) on it: a save writes a new file, and
    // so does another program's atomic write, and neither carries the attribute over. Without it,
    // the store finds the item by its recorded path only, and a file whose folder was moved by
    // another program meanwhile became a new item: its conflict versions were no longer listed.
    // A document that knows no identity (its file never had a version) costs nothing here.

    /// Before the save's check: puts the known identity back on the file if it lacks it, so a
    /// version kept now is the same item's.
    nonisolated func restoreItemIdentity(at path: String) {
        guard let known = storage.withLock({ $0.itemIdentity }),
              ItemIdentityAttribute.read(path) == nil, DiskIdentity.of(path, followingLinks: true) != nil else { return }
        ItemIdentityAttribute.write(known, to: path)
    }

    /// After a version was kept: learns the identity the store gave the file.
    nonisolated func learnItemIdentity(at path: String) {
        guard let onDisk = ItemIdentityAttribute.read(path) else { return }
        storage.withLock { $0.itemIdentity = onDisk }
    }

    /// After the write: the new file has no attribute yet; it gets the known identity.
    nonisolated func stampItemIdentity(onNewFileAt path: String) {
        guard let known = storage.withLock({ $0.itemIdentity }) else { return }
        ItemIdentityAttribute.write(known, to: path)
    }
}
