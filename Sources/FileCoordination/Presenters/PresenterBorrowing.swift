import Synchronization

/// While a presenter is answering `savePresentedItemChanges` or an accommodate-deletion request,
/// the coordinations it makes itself (through a coordinator created with that presenter) act on
/// behalf of the coordinator that asked — they join its locks instead of waiting for them.
///
/// Without this, a document asked to save by a reader would wait forever for that reader's lock
/// to write its changes. Apple's coordinator behaves the same way.
enum PresenterBorrowing {
    private static let lenders = Locked<[ObjectIdentifier: (owner: LockOwner, depth: Int)]>([:])

    static func begin(_ presenter: any FilePresenter, lendingTo owner: LockOwner) {
        lenders.withLock { lenders in
            let id = ObjectIdentifier(presenter)
            lenders[id] = (owner, (lenders[id]?.depth ?? 0) + 1)
        }
    }

    static func end(_ presenter: any FilePresenter) {
        lenders.withLock { lenders in
            let id = ObjectIdentifier(presenter)
            guard let entry = lenders[id] else { return }
            if entry.depth <= 1 { lenders.removeValue(forKey: id) } else { lenders[id] = (entry.owner, entry.depth - 1) }
        }
    }

    /// The owner a coordinator for `presenter` should act as right now, if it is borrowing one.
    static func owner(for presenter: any FilePresenter) -> LockOwner? {
        lenders.withLock { $0[ObjectIdentifier(presenter)]?.owner }
    }
}
