import Synchronization

/// While a presenter answers `savePresentedItemChanges` or an accommodate-deletion request, the
/// coordinations it makes itself (through a coordinator created with that presenter) act on
/// behalf of the coordinator that asked — they join its locks instead of waiting for them.
///
/// Without this, a document asked to save by a reader would wait forever for that reader's lock
/// to write its changes. Apple's coordinator behaves the same way.
///
/// Two tables, joined only by a `BorrowToken` (a number carried in the request):
/// - `LockLending` (the asker's side): token → the asker's lock owner, while it waits for answers;
/// - `PresenterBorrowing` (the presenter's side): presenter → the tokens of the requests it is
///   answering right now.
/// A presenter's coordinator finds its presenter's latest token still lent and joins that owner.
/// Nothing here depends on the asker and the presenter sharing an object: a token that does not
/// resolve (its lending ended, or it came from another process) simply lends nothing.
///
/// One pair per `CoordinationRuntime`.
final class PresenterBorrowing: Sendable {
    /// The lending table of the same runtime (also where the owners borrowed from other
    /// processes are lent to this runtime's presenters, `RemotePresence`).
    let lending: LockLending
    private let answering = Locked<[PresenterID: [BorrowToken]]>([:])
    /// How many presenters answer under a token now: lets `owner(for:)` skip the lock when none do.
    private let activeCount = Atomic<Int>(0)

    init(lending: LockLending) {
        self.lending = lending
    }

    /// The presenter starts answering a request that carries `token`.
    func begin(_ presenter: PresenterID, token: BorrowToken) {
        answering.withLock { answering in
            answering[presenter, default: []].append(token)
            activeCount.store(answering.count, ordering: .releasing)
        }
    }

    /// The presenter answered the request that carried `token`.
    func end(_ presenter: PresenterID, token: BorrowToken) {
        answering.withLock { answering in
            guard var tokens = answering[presenter], let index = tokens.lastIndex(of: token) else { return }
            tokens.remove(at: index)
            answering[presenter] = tokens.isEmpty ? nil : tokens
            activeCount.store(answering.count, ordering: .releasing)
        }
    }

    /// The owner a coordinator for `presenter` should act as right now, if it is borrowing one:
    /// the owner of the latest request it answers whose lending has not ended.
    func owner(for presenter: any FilePresenter) -> LockOwner? {
        guard activeCount.load(ordering: .acquiring) > 0 else { return nil }
        let tokens = answering.withLock { $0[PresenterID(presenter)] } ?? []
        for token in tokens.reversed() {
            if let owner = lending.owner(token) { return owner }
        }
        return nil
    }
}

/// The asker's side of lock borrowing: which lock owner each outstanding `BorrowToken` names.
final class LockLending: Sendable {
    private let state = Locked<(next: UInt64, owners: [UInt64: LockOwner])>((0, [:]))

    /// Lends `owner` until `end` is called; the token goes into the requests.
    func lend(_ owner: LockOwner) -> BorrowToken {
        state.withLock { state in
            state.next += 1
            state.owners[state.next] = owner
            return BorrowToken(value: state.next)
        }
    }

    /// Ends the lending: presenters still answering no longer join the asker's locks (the asker
    /// is giving them up, after a failure or once every answer is in).
    func end(_ token: BorrowToken) {
        _ = state.withLock { $0.owners.removeValue(forKey: token.value) }
    }

    func owner(_ token: BorrowToken) -> LockOwner? {
        state.withLock { $0.owners[token.value] }
    }
}
