import FileCoordination
import Foundation
import SystemSupport

// A save, in three steps (Docs/Documents.md, "Saving"):
//
// 1. **Snapshot**, on the main actor: `contents(forType:)` and the attributes, with the change
//    token read before them (`takeSnapshot`, usually taken before the save was queued:
//    `prepareSave`).
// 2. **Write**, in one coordinated write of the target (`writeUnderLock`): the snapshot is checked
//    to be still current (else taken again), the file found there is protected (merged or kept as
//    a conflict version, never silently overwritten), the snapshot written safely, and what was
//    done returned as a `SaveOutcome`.
// 3. **Record** (`record(_:)`), still under the write lock: the document's file, identity, change
//    token and state. Under the lock, not after it: a writer of another process that takes the
//    lock next must find the document already knowing the bytes it saved (else its change is
//    taken for ours, or ours for a change to reload), and a document saved somewhere new is
//    registered there before anyone else can coordinate on that path. Then, without the lock,
//    the conflict state, the save observer and the state announcements (`finishSave`).
//
// `performSave` runs on the lifecycle queue (explicit saves, autosave, close) or on the presenter
// save queue (a save asked by another coordinator), never on the main thread; `saveLock` keeps
// two of them from writing at once.

extension CloudDocument {
    /// What a save's coordinated write did: what the record and the steps after it need.
    struct SaveOutcome {
        /// The file written (the target the coordinator gave: a coordinated move may have changed it).
        var target: URL
        /// The snapshot written.
        var snapshot: Snapshot
        /// The check before writing (merged contents, conflict version kept).
        var protection: OverwriteProtection
        /// The file's identity just after the write.
        var identity: DiskIdentity?
        /// The target is the document's own file (wherever a move notice says it is now).
        var ownFile: Bool
    }

    /// What recording a save changed, for the steps after the write lock.
    struct SaveRecord {
        /// A new document became open with this save (its first save, or a save of a closed one).
        var becameOpen: Bool
        /// The document's file is now elsewhere (saved as, or opened by this save).
        var landedElsewhere: Bool
        /// A conflict version was kept.
        var keptConflict: Bool
    }

    /// Saves to `url`: the three steps above. Throws what the snapshot, coordination or write
    /// threw — after reporting it to ``handleError(_:userInteractionPermitted:)`` (as `origin`
    /// permits), setting ``DocumentState/savingError`` and telling the save observer — with the
    /// file on disk untouched. ``DocumentError/documentClosed`` when the document closed (or
    /// reopened) since an autosave, a close's save or a presenter's save was asked for; an
    /// explicit save goes on (see `writeUnderLock`).
    nonisolated func performSave(to url: URL, for operation: SaveOperation, origin: SaveOrigin,
                                 prepared: PreparedSave? = nil) throws {
        assertNotOnMainThread()
        let start = prepared?.start ?? storage.withLock { SaveStart(session: $0.session, wasOpen: $0.isOpen, fileURL: $0.fileURL) }
        // The progress published for the snapshot being written: ended if the save fails.
        var progress: Progress?
        // Save requests arriving meanwhile wait for this save instead of writing the same version
        // again (`RunningOwnSave`); they are answered once it has ended, whatever the outcome.
        // (Lifecycle saves run one at a time; should one ever start while another is announced,
        // it is simply not announced, so no waiter is ever dropped.)
        let announcesRunning = origin.runsOnLifecycleQueue && operation == .forOverwriting && start.wasOpen
            && url.isSameFilePath(as: start.fileURL)
            && storage.withLock { storage -> Bool in
                guard storage.runningOwnSave == nil else { return false }
                storage.runningOwnSave = RunningOwnSave(session: start.session)
                return true
            }
        defer {
            if announcesRunning {
                let waiters = storage.withLock { storage -> [@Sendable () -> Void] in
                    defer { storage.runningOwnSave = nil }
                    return storage.runningOwnSave?.waiters ?? []
                }
                for waiter in waiters { waiter() }
            }
        }
        do {
            if case .presenter(let session) = origin, session != start.session { throw DocumentError.documentClosed }
            if origin != .explicit && !start.wasOpen { throw DocumentError.documentClosed }
            // The snapshot is taken now, holding no lock, when the caller did not take one: a hop
            // to the main actor under the write lock would keep every other reader and writer of
            // the file waiting for this process's main queue. (Still checked under the lock, and
            // taken again there if the document changed meanwhile.)
            let prepared = prepared ?? onMainActor { () -> PreparedSave in
                // An explicit save of a document closed meanwhile goes on (see `writeUnderLock`).
                let current = origin == .explicit ? explicitSaveStart(continuing: start) : start
                return PreparedSave(start: current, snapshot: Swift.Result { try takeSnapshot(to: url, for: operation, start: current) })
            }
            let snapshot = try prepared.snapshot.get()
            progress = snapshot.progress
            let preparedSnapshot: Snapshot? = snapshot
            let coordinator = makeCoordinator()
            // The folder's `fsync` waits until the write lock is released (DeferredFolderFlush):
            // the next writer of the file need not wait for it; this save still returns only
            // once it is made.
            let folderFlush = DeferredFolderFlush()
            // Files replaced by earlier saves and not yet freed are freed now, before the write
            // lock (ReplacedFileRelease): never inside it, and never after this save's conflict
            // version or temporary file needed the space.
            ReplacedFileRelease.closePending()
            let record = try folderFlush.collecting {
                try coordinator.coordinate(writingItemAt: url) { target in
                    saveLock.lock()
                    defer { saveLock.unlock() }
                    let outcome = try writeUnderLock(to: url, target: target, for: operation, origin: origin, start: start,
                                                     prepared: preparedSnapshot, coordinator: coordinator, progress: &progress)
                    return self.record(outcome)
                }
            }
            let flushFailure: SystemCallError?
            do throws(SystemCallError) { try folderFlush.flush(); flushFailure = nil } catch { flushFailure = error }
            // The files replaced are freed once the folder is flushed, off this save's path
            // (ReplacedFileRelease): on the lifecycle queue, right after this operation.
            folderFlush.releaseReplacedFiles(on: origin.runsOnLifecycleQueue ? lifecycleQueue : nil)
            if let error = flushFailure {
                // In place but not durable: the document keeps counting its contents as unsaved,
                // so its next save (or autosave) writes them again.
                update { storage in storage.changes.forgetSaved() }
                throw DocumentError.saveFailed(url, reason: "the new contents are in place, but the folder could not be flushed to disk (\(error.call))", errno: error.errno)
            }
            finishSave(to: url, record)
        } catch {
            endProgress(progress)
            update { storage in
                if storage.session == start.session && storage.isOpen { storage.state.insert(.savingError) }
            }
            report(error, userInteractionPermitted: origin.userInteractionPermitted)
            notifySaveObserver(.failure(error))
            waitForAnnouncements()
            throw error
        }
    }

    /// Step 2, with the write lock of `target` and `saveLock` held: the snapshot (the prepared one
    /// if still current, else a new one from the main actor), the protection of the file found at
    /// `target`, and the safe write. `progress` is set to the snapshot's progress as soon as it is
    /// known.
    ///
    /// An explicit save asked while the document was open finds it closed when another program's
    /// coordinated delete or replace of the file (or of a folder above it) closed it meanwhile
    /// (`accommodatePresentedItemDeletion`; a replace that then found its place taken deletes
    /// nothing). The user still asked for this save: it goes on as the explicit save of a closed
    /// document that it is now — the same conflict check of the file found, and the document is
    /// open again once it is written — instead of failing with a "closed" that the caller never
    /// saw. Autosaves, closes and presenter saves still stop there (nothing asked them to reopen).
    private nonisolated func writeUnderLock(
        to url: URL, target: URL, for operation: SaveOperation, origin: SaveOrigin, start: SaveStart,
        prepared: Snapshot?, coordinator: Coordinator, progress: inout Progress?
    ) throws -> SaveOutcome {
        let snapshot: Snapshot
        let (nowToken, nowKnown, sameSession) = storage.withLock {
            ($0.changes.token, $0.diskIdentity, $0.session == start.session && $0.isOpen == start.wasOpen)
        }
        if let prepared, sameSession, prepared.token == nowToken, prepared.knownIdentity == nowKnown {
            snapshot = prepared
        } else {
            // No snapshot, or one taken before the document changed again or before another save
            // or reload of it: take it now. (Writing a stale snapshot after another save wrote
            // newer contents — a merge with another program's edit, say — would silently drop
            // them.) The session is compared in the same main-actor turn, where closes happen.
            snapshot = try onMainActor { () throws -> Snapshot in
                let current = origin == .explicit ? explicitSaveStart(continuing: start) : start
                return try takeSnapshot(to: url, for: operation, start: current)
            }
            progress = snapshot.progress
        }
        storage.withLock { $0.writeProgress = progressReporter(for: snapshot.progress) }
        defer { storage.withLock { $0.writeProgress = nil } }
        // A file changed since we last read or wrote it is kept as a conflict version (or merged
        // by resolveConflict), never silently overwritten.
        let targetPath = PathBytes.path(of: target)
        let ownFile = url.isSameFilePath(as: start.fileURL)
            || storage.withLock { $0.locations.contains(url) || $0.locations.contains(target) }
        if ownFile { restoreItemIdentity(at: targetPath) }
        func protect() throws -> OverwriteProtection {
            let protection = try protectOverwrittenContents(at: target, path: targetPath, for: operation,
                                                            requested: url, startedFor: start.fileURL,
                                                            contents: snapshot.contents, coordinator: coordinator)
            // Keeping a version may have given the file its identity just now: learn it.
            if ownFile && protection.keptVersion { learnItemIdentity(at: targetPath) }
            return protection
        }
        // Overwriting a file that was not there when checked creates it (no replace): an item
        // that appeared since was never checked and must not be overwritten unseen.
        func write(_ protection: OverwriteProtection) throws {
            let writeOperation: SaveOperation = protection.targetWasMissing ? .forCreating : operation
            try writeContents(protection.contents, andAttributes: snapshot.attributes, safelyTo: target, for: writeOperation)
        }
        let firstCheck = try protect()
        let protection: OverwriteProtection
        do {
            try write(firstCheck)
            protection = firstCheck
        } catch DocumentError.alreadyExists where firstCheck.targetWasMissing && operation == .forOverwriting {
            // It appeared after the check (a folder moved back into place by a move that took no
            // lock of this path, in the soak): check it now, as any file found at the target is —
            // merged or kept as a conflict version — then overwrite it. Once: a second appearance
            // fails the save with `alreadyExists`.
            let secondCheck = try protect()
            try write(secondCheck)
            protection = secondCheck
        }
        if ownFile { stampItemIdentity(onNewFileAt: targetPath) }
        return SaveOutcome(target: target, snapshot: snapshot, protection: protection,
                           identity: DiskIdentity.of(targetPath, followingLinks: true), ownFile: ownFile)
    }

    /// The start an explicit save continues from, on the main actor: `start` while the document
    /// is still in that session; else the document's session now (closed, usually: see
    /// ``writeUnderLock(to:target:for:origin:start:prepared:coordinator:progress:)``), with the
    /// file the save was asked for.
    private func explicitSaveStart(continuing start: SaveStart) -> SaveStart {
        storage.withLock { storage in
            guard storage.session != start.session || storage.isOpen != start.wasOpen else { return start }
            return SaveStart(session: storage.session, wasOpen: storage.isOpen, fileURL: start.fileURL)
        }
    }

    /// Step 3, still under the write lock: the document now presents `outcome.target`, with the
    /// saved bytes' identity and change token; a document that became open, or moved, is
    /// registered at its file again before the lock is released.
    ///
    /// With progress: on the main actor, after the announcement of progressAvailable, so an
    /// observer of that announcement still finds the progress published; the changes are
    /// announced in the same visit (the wait for announcements after the save then needs no
    /// second one). Without: at once, on the calling thread.
    private nonisolated func record(_ outcome: SaveOutcome) -> SaveRecord {
        let keptConflict = outcome.protection.conflict != nil
        let apply = { @Sendable [self] in update { storage -> (URL, Bool) in
            let oldURL = storage.fileURL
            storage.fileURL = outcome.target
            // Saved over its own file (wherever it was found), or somewhere new.
            if outcome.ownFile { storage.locations.moved(to: outcome.target) } else { storage.locations.reset(to: outcome.target) }
            storage.changes.markSaved(outcome.snapshot.token)
            storage.diskIdentity = outcome.identity
            storage.racyContents = RacyIdentity.bytesToKeep(for: outcome.identity, contents: outcome.protection.contents.data)
            if let identity = outcome.identity { storage.fileModificationDate = identity.modificationDate }
            storage.state.remove(.savingError)
            if keptConflict { storage.state.insert(.inConflict) }
            if let progress = outcome.snapshot.progress, storage.progress === progress {
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
        let (oldURL, becameOpen) = outcome.snapshot.progress == nil ? apply() : onMainActor { () -> (URL, Bool) in
            let recorded = apply()
            announcePendingStates()
            return recorded
        }
        let moved = !oldURL.isSameFilePath(as: outcome.target)
        if becameOpen {
            registerAsPresenter()
        } else if moved {
            reregisterAsPresenter()
        }
        return SaveRecord(becameOpen: becameOpen, landedElsewhere: becameOpen || moved, keptConflict: keptConflict)
    }

    /// After the write lock: autosave for a document that became open, the conflict state, the
    /// save observer, and the state announcements (waited for, so they precede the caller's
    /// completion).
    private nonisolated func finishSave(to url: URL, _ record: SaveRecord) {
        if record.becameOpen { restartAutosaveTimer() }
        // A save as (or a first save) may land on an item that has unresolved conflicts. A save
        // over the document's own file changes no conflict version unless it kept one (then the
        // state is set in the record): the store is not read again (it costs a tenth of a small
        // save).
        if !record.keptConflict && record.landedElsewhere { refreshConflictState() }
        notifySaveObserver(.success(url))
        waitForAnnouncements()
    }

    /// Tells the save observer (a test hook) how the save ended, on the main actor.
    private nonisolated func notifySaveObserver(_ outcome: Result<URL, any Error>) {
        guard let observer = storage.withLock({ $0.saveObserver }) else { return }
        onMainActor { observer(outcome) }
    }
}
