import FileCoordination
import Foundation

// The open document is the registered presenter of its file. Every message arrives on
// `presentedItemOperationQueue` (these methods are `nonisolated`, as the `FilePresenter`
// requirements are) and is answered without blocking that queue: work on the model hops to the
// main actor, work that needs the file (a save, a reload) runs on the file-access queue.
//
// Each method is `open`, as in `UIDocument`: an override runs on the presenter queue too and
// should call `super` (the document relies on it to follow moves, reload, save for readers and
// close on deletion). To touch your model from an override, hop:
// `Task { @MainActor in … }`.
//
// The `open` declarations, with their documentation, are in the class body (CloudDocument.swift):
// Swift cannot override methods declared in extensions. These are their default implementations.

extension CloudDocument {
    nonisolated func defaultRelinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        reader(nil)
    }

    nonisolated func defaultRelinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        guard storage.withLock({ $0.isOpen }) else {
            writer(nil)
            return
        }
        // The writer goes on at once, from the presenter queue: it must not wait for the main
        // actor, which may be the very thread waiting for this write (`FileVersion.resolve()` or a
        // coordinated write started on the main actor would deadlock). The state follows on the
        // main actor in order (the main queue is FIFO): `.editingDisabled` and `disableEditing()`,
        // then, after the writer's reacquirer, `enableEditing()` and back.
        let session = Locked<Int?>(nil)
        enqueueOnMainActor { [self] in session.withLock { $0 = beginDisablingEditing() } }
        writer { [self] in
            enqueueOnMainActor { [self] in
                if let started = session.withLock({ $0 }) { endDisablingEditing(session: started) }
            }
        }
    }

    nonisolated func defaultSavePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        if runtime.isLendingLocks(to: self) {
            // A reader of this process holds its lock and waits for this answer, lending us the
            // lock: the save must not wait in line behind another save of ours that may be
            // waiting for that very lock (a save asked by another process, say). It joins the
            // reader's lock at once, on a thread of its own; `saveLock` keeps two saves from
            // writing at the same time.
            guard let save = saveForRequest(completionHandler: completionHandler) else { return }
            let thread = Thread(block: save)
            thread.name = "CloudDocument.presenterSave (lent locks)"
            thread.start()
            return
        }
        // A save of the file already running on the lifecycle queue writes what is unsaved now
        // (or newer): answer after it instead of writing the same version again
        // (`RunningOwnSave`). Then, on the presenter save queue, the request is answered as it
        // would have been now — usually with nothing left to save.
        let waits = storage.withLock { storage -> Bool in
            guard storage.isOpen, storage.changes.hasUnsavedChanges,
                  var running = storage.runningOwnSave, running.session == storage.session else { return false }
            running.waiters.append { [self] in
                presenterSaveQueue.async { [self] in saveForRequest(completionHandler: completionHandler)?() }
            }
            storage.runningOwnSave = running
            return true
        }
        if waits { return }
        guard let save = saveForRequest(completionHandler: completionHandler) else { return }
        presenterSaveQueue.async(execute: save)
    }

    /// The answer to a save request: `nil` after answering at once when there is nothing to save
    /// (closed, or no unsaved changes); else the save to run (off the presenter queue), which
    /// answers when it has ended.
    private nonisolated func saveForRequest(completionHandler: @escaping @Sendable ((any Error)?) -> Void) -> (@Sendable () -> Void)? {
        let (isOpen, dirty, url, session) = storage.withLock {
            ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL, $0.session)
        }
        guard isOpen, dirty else {
            completionHandler(nil)
            return nil
        }
        return { [self] in
            do {
                // The snapshot first, on the main actor, holding no lock: a main queue that is
                // busy (or blocked) then delays only this answer — which another process awaits
                // at most `answerLimit`, before taking its lock — never a lock that every other
                // coordinator of the file would wait for.
                let prepared = onMainActor { prepareSave(to: url, for: .forOverwriting) }
                try performSave(to: url, for: .forOverwriting, origin: .presenter(session: session), prepared: prepared)
                completionHandler(nil)
            } catch DocumentError.documentClosed {
                // Closed meanwhile: a close saves before it closes (or the file was deleted), so
                // nothing unsaved is left to refuse the reader for — it reads what is on disk.
                completionHandler(nil)
            } catch {
                completionHandler(error)
            }
        }
    }

    nonisolated func defaultAccommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        enqueueOnMainActor { [self] in
            // A coordinator asks before it deletes: the file is still there, and the document
            // closes. The change monitor reports a deletion by a program that did not coordinate
            // (`rm`) after the fact: a document with unsaved changes then stays open with them
            // (nobody asked to discard them), and its next save writes the file again.
            let (dirty, url) = storage.withLock { ($0.changes.hasUnsavedChanges, $0.fileURL) }
            if dirty && DiskIdentity.of(url) == nil {
                completionHandler(nil)
                return
            }
            closeImmediately()
            completionHandler(nil)
        }
    }

    nonisolated func defaultAccommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        enqueueOnMainActor { [self] in
            let (dirty, url) = storage.withLock { ($0.changes.hasUnsavedChanges, $0.fileURL) }
            if dirty {
                completionHandler(DocumentError.evictionRefused(url))
                return
            }
            closeImmediately()
            completionHandler(nil)
        }
    }

    nonisolated func defaultPresentedItemDidMove(to newURL: URL) {
        let current = DiskIdentity.of(newURL)
        storage.withLock { storage in
            storage.fileURL = newURL
            storage.locations.moved(to: newURL)
            // A rename changes the file's status-change time, not its contents: the same file
            // (device, inode, size, modification time) is still what the document last read or
            // wrote, so its next save is not taken for a conflict.
            if let known = storage.diskIdentity, let current, current.device == known.device, current.inode == known.inode,
               current.size == known.size, current.modified == known.modified {
                storage.diskIdentity = current
            }
        }
    }

    nonisolated func defaultPresentedItemDidChange() {
        let (isOpen, dirty, url, known) = storage.withLock {
            ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL, $0.diskIdentity)
        }
        guard isOpen, !dirty else { return }
        // Gone (deleted or renamed by someone who did not coordinate): nothing to reload; the
        // document keeps its contents, and its next save writes them back.
        guard let current = DiskIdentity.of(url) else { return }
        // The echo of our own save (or no change at all): nothing to do.
        if current == known { return }
        enqueueOnMainActor { [self] in
            let session = beginDisablingEditing()
            enqueueFileAccess { [self] in
                // Failures were reported to handleError; the document keeps its contents.
                try? performRevert(to: fileURL, presenterSession: session)
            }
        }
    }
}
