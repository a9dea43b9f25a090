import Foundation

extension Coordinator {
    /// Announces that the item at `oldURL` was moved to `newURL`. Call it inside the write block of
    /// the move. Presenters of the item and of everything inside it get
    /// `presentedItemDidMove(to:)` with their new URL; presenters of the directories containing the
    /// old or new location get `presentedSubitem(at:didMoveTo:)`. This coordinator's own presenter
    /// is not messaged (but is re-indexed under its new URL). Messages are delivered
    /// asynchronously on each presenter's queue; this method does not wait for them.
    public func item(at oldURL: URL, didMoveTo newURL: URL) {
        let oldPath = CanonicalPath.of(oldURL)
        CanonicalPath.invalidate(under: oldPath)
        let newPath = CanonicalPath.of(newURL)
        MoveLog.record(from: oldPath, to: newPath)
        let registry = PresenterRegistry.shared
        guard !registry.isEmpty else { return }
        let own = filePresenter.map(ObjectIdentifier.init)
        for (presenter, _, destination) in registry.move(from: oldPath, to: newPath)
        where ObjectIdentifier(presenter) != own {
            let url = URL(fileURLWithPath: destination)
            deliver(to: presenter) { presenter.presentedItemDidMove(to: url) }
        }
        var told = Set<ObjectIdentifier>()
        let containing = registry.presentersOfAncestors(of: oldPath) + registry.presentersOfAncestors(of: newPath)
        for (presenter, _) in containing where ObjectIdentifier(presenter) != own {
            guard told.insert(ObjectIdentifier(presenter)).inserted else { continue }
            deliver(to: presenter) { presenter.presentedSubitem(at: oldURL, didMoveTo: newURL) }
        }
    }
}
