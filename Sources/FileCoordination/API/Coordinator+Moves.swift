import Foundation

extension Coordinator {
    /// Announces that the item at `oldURL` was moved to `newURL`. Call it inside the write block of
    /// the move. Presenters of the item and of everything inside it get
    /// `presentedItemDidMove(to:)` with their new URL; presenters of the directories containing the
    /// old or new location get `presentedSubitem(at:didMoveTo:)`. This coordinator's own presenter
    /// is not messaged (but is re-indexed under its new URL). Messages are delivered
    /// asynchronously on each presenter's queue; this method does not wait for them.
    public func item(at oldURL: URL, didMoveTo newURL: URL) {
        let oldPath = CanonicalPath.of(oldURL, in: runtime.paths)
        CanonicalPath.invalidate(under: oldPath, in: runtime.paths)
        let newPath = CanonicalPath.of(newURL, in: runtime.paths)
        runtime.moveLog.record(from: oldPath, to: newPath)
        let messenger = PresenterMessenger(runtime: runtime, ownPresenter: filePresenter, requester: owner,
                                           context: WaitContext(timeout: nil, token: cancellation))
        messenger.announceMove(from: oldPath, to: newPath, oldURL: oldURL, newURL: newURL)
    }
}
