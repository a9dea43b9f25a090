/// One `LockOwner` per file presenter, shared by every coordinator created with that presenter.
///
/// Apple: "file coordinators instantiated with the same file presenter never block each other".
/// Sharing the owner gives exactly that — a second coordinator's access nests in the first's
/// holding like a coordinator's own nested access (a read inside a write, a write inside a read)
/// — and costs nothing when no presenter is given.
///
/// Entries hold the presenter and the owner weakly: the owner lives as long as a coordinator (or
/// an access in flight) uses it, and a new presenter at a reused address never finds the old
/// presenter's owner, because the entry's presenter must be the very same object.
///
/// One per `CoordinationRuntime`; its owners create lock files through the runtime's lock table.
final class PresenterLockOwners: Sendable {
    private struct Entry {
        weak var presenter: (any FilePresenter)?
        weak var owner: LockOwner?
        /// The owner kept between the presenter's coordinators (see `keep`), holding nothing.
        var kept: LockOwner?
    }

    private let lockTable: LockTable
    /// Owners of coordinators without a presenter that have gone, ready for the next one: making
    /// and freeing an owner (its state, its lock, its descriptor hand-back) is a third of the cost
    /// of a coordinator made for one access, as Apple advises. At most `spareLimit`, each holding
    /// nothing and at most one idle descriptor.
    private let spare = Locked<[LockOwner]>([])
    private static let spareLimit = 8
    private let entries = Locked<(byPresenter: [ObjectIdentifier: Entry], sweepAt: Int)>(([:], 64))

    init(lockTable: LockTable) {
        self.lockTable = lockTable
    }

    /// The owner for a new coordinator: without a presenter, a spare one (see `recycle`) or a new
    /// one; with a presenter, the one every coordinator of that presenter shares.
    func owner(for presenter: (any FilePresenter)?) -> LockOwner {
        guard let presenter else { return spare.withLock { $0.popLast() } ?? LockOwner(lockTable: lockTable) }
        let id = ObjectIdentifier(presenter)
        return entries.withLock { entries in
            if let entry = entries.byPresenter[id], entry.presenter === presenter, let owner = entry.owner {
                return owner
            }
            let owner = LockOwner(lockTable: lockTable)
            entries.byPresenter[id] = Entry(presenter: presenter, owner: owner)
            if entries.byPresenter.count >= entries.sweepAt {
                entries.byPresenter = entries.byPresenter.filter { $0.value.owner != nil && $0.value.presenter != nil }
                entries.sweepAt = max(64, entries.byPresenter.count * 2)
            }
            return owner
        }
    }

    /// Keeps the owner of `presenter`'s coordinator that is going away for the presenter's next
    /// coordinator (a document saves with one coordinator per save, one after another: making and
    /// freeing an owner each time is a tenth of the coordination's cost). Only an owner that holds
    /// nothing, that nobody waits on and that is in no group (a purpose set by one coordinator is
    /// not passed on) is kept, and without descriptors: they go back to the shared cache. The
    /// owner is dropped with the presenter's entry once the presenter is gone.
    func keep(_ owner: LockOwner, for presenter: any FilePresenter) {
        let keepIt = owner.prepareForKeeping()
        let id = ObjectIdentifier(presenter)
        entries.withLock { entries in
            guard let entry = entries.byPresenter[id], entry.presenter === presenter, entry.owner === owner,
                  (entry.kept === owner) != keepIt else { return }  // usually kept already: nothing to write
            entries.byPresenter[id]?.kept = keepIt ? owner : nil
        }
    }

    /// Takes back the owner of a coordinator without a presenter that is going away, when it
    /// holds nothing (otherwise it is simply freed).
    func recycle(_ owner: LockOwner) {
        guard owner.prepareForReuse() else { return }
        spare.withLock { spare in
            if spare.count < Self.spareLimit { spare.append(owner) }
        }
    }
}
