import FileCoordination
import Foundation

// The open document is the registered presenter of its file. Every message arrives on the
// document queue (`presentedItemOperationQueue`) and is answered without blocking it: work that
// needs the file (a save, a reload) runs on a background thread or the lifecycle queue.
// These are the witnesses of the `FilePresenter` conformance; they are not overridable (a
// subclass customizes the document through the hooks, `disableEditing`/`enableEditing` and
// `handleError` instead).

extension CloudDocument {
    /// Another coordinator is about to write the file: the state gains
    /// ``DocumentState/editingDisabled`` and ``disableEditing()`` is called until the writer is done
    /// (the reacquirer removes them again).
    public func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        guard storage.withLock({ $0.isOpen }) else {
            writer(nil)
            return
        }
        let session = beginDisablingEditing()
        writer { [self] in endDisablingEditing(session: session) }
    }

    /// Another coordinator is about to read the file: if the document has unsaved changes they are
    /// saved first (through `Coordinator(filePresenter: self)`, which joins the asker's locks, so
    /// this does not deadlock), then the handler is called — with the save's error if it failed
    /// (the reader then fails with ``CoordinationError/presenterFailed(_:)`` instead of reading
    /// stale contents).
    public func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        let (isOpen, dirty, url, session) = storage.withLock {
            ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL, $0.session)
        }
        guard isOpen, dirty else {
            completionHandler(nil)
            return
        }
        presenterSaveQueue.async { [self] in
            do {
                try performSave(to: url, for: .forOverwriting, origin: .presenter(session: session))
                completionHandler(nil)
            } catch {
                completionHandler(error)
            }
        }
    }

    /// The file is about to be deleted: the document closes at once, without saving (there is
    /// nothing left to save to): state ``DocumentState/closed``, autosave stopped, presenter
    /// unregistered. Then the handler is called.
    public func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        closeImmediately()
        completionHandler(nil)
    }

    /// The file was moved (by a coordinated move): ``fileURL`` follows it.
    public func presentedItemDidMove(to newURL: URL) {
        storage.withLock { $0.fileURL = newURL }
    }

    /// Another writer changed the file (told by a coordinator, or by the change monitor for
    /// uncoordinated changes). If the document has no unsaved changes and the file exists and is
    /// not what the document last read or wrote, it reloads it (as ``revert(toContentsOf:)`` does,
    /// with ``DocumentState/editingDisabled`` from now until the reload is done). Unsaved changes
    /// are kept: the document does not reload over them.
    public func presentedItemDidChange() {
        let (isOpen, dirty, url, known) = storage.withLock {
            ($0.isOpen, $0.changes.hasUnsavedChanges, $0.fileURL, $0.diskIdentity)
        }
        guard isOpen, !dirty else { return }
        // Gone (deleted or renamed by someone who did not coordinate): nothing to reload; the
        // document keeps its contents, and its next save writes them back.
        guard let current = DiskIdentity.of(url) else { return }
        // The echo of our own save (or no change at all): nothing to do.
        if current == known { return }
        let session = beginDisablingEditing()
        lifecycleQueue.async { [self] in
            // Failures were reported to handleError; the document keeps its contents.
            try? performRevert(to: fileURL, presenterSession: session)
        }
    }
}
