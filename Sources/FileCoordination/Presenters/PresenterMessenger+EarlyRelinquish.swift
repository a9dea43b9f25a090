import Foundation

/// A presenter in another process that relinquished to an access before its locks were taken,
/// and to which kind of access (a reader or a writer).
struct EarlyRelinquishment: Hashable, Sendable {
    var id: PresenterID
    var toWriter: Bool
}

extension PresenterMessenger {
    // MARK: Relinquishing in other processes before the locks

    /// Asks the presenters in other processes of each access's item (for a package access: of the
    /// package and of everything inside it) to relinquish — to a reader or to a writer — **before**
    /// the locks are taken, and keeps their reacquirers for after the access
    /// (`earlyReacquirers`; `prepare` returns them first). `prepare` then does not ask them again.
    ///
    /// Why before: the answer is a round trip through two processes' threads. Asked with the
    /// locks held, every reader and writer of the item — in every process — waits for that round
    /// trip too; asked before, it overlaps with the wait for the locks. A relinquish answer takes
    /// no lock (invariant 1 of Docs/RemotePresenters.md), so asking it without holding one cannot
    /// make a cycle of lock waits; and the relinquishment is given back if the locks are not
    /// granted within `RemotePresence.earlyRelinquishWindow` (`acquireLocks`), so a presenter
    /// whose own coordinated work waits for our reacquirer cannot keep us waiting for a lock it
    /// holds. Presenters inside a folder being removed are still asked with the locks held:
    /// whether the item is a folder is known only then.
    ///
    /// On failure (an error from a presenter, a timeout, cancellation) the reacquirers received
    /// are run before throwing.
    mutating func relinquishElsewhereBeforeLocking(_ accesses: [ResolvedAccess]) throws(CoordinationError) {
        guard remote.relinquishesBeforeLocking else { return }
        var readers: [PresenterAddress] = []
        var writers: [PresenterAddress] = []
        for access in accesses where concernsOtherProcesses(access) {
            let found = try lookUpElsewhere(for: access)
            let concerned = presentersConcerned(by: access, foundElsewhere: found)
            if access.isWrite { writers += concerned } else { readers += concerned }
        }
        let toReaders = unique(readers), toWriters = unique(writers)
        guard !toReaders.isEmpty || !toWriters.isEmpty else { return }
        var received: Reacquirers = []
        do {
            received += try relinquish(toReaders, toWriter: false)
            received += try relinquish(toWriters, toWriter: true)
        } catch {
            Self.run(received)
            throw error
        }
        earlyReacquirers += received
        relinquishedEarly.formUnion(toReaders.map { EarlyRelinquishment(id: $0.id, toWriter: false) })
        relinquishedEarly.formUnion(toWriters.map { EarlyRelinquishment(id: $0.id, toWriter: true) })
    }

    /// Gives back what presenters in other processes relinquished early (runs their reacquirers)
    /// and forgets it: `prepare` asks them again with the locks held. For an access that fails or
    /// starts over before `prepare`, or whose locks took longer than the early window.
    mutating func giveBackEarlyRelinquishments() {
        Self.run(earlyReacquirers)
        earlyReacquirers = []
        relinquishedEarly = []
    }

    /// Takes the access's locks with `acquire`. With no early relinquishment, it waits as the
    /// access's context allows. With some, it first waits at most
    /// `RemotePresence.earlyRelinquishWindow` (or less, when the context's deadline comes
    /// sooner); past it, it gives the relinquishments back and waits as the context allows — the
    /// order of a lock first, then the relinquishments (`prepare` asks again). Whatever it throws,
    /// the early relinquishments have been given back.
    mutating func acquireLocks<Locks>(_ acquire: (WaitContext) throws(CoordinationError) -> Locks) throws(CoordinationError) -> Locks {
        guard !relinquishedEarly.isEmpty else { return try acquire(context) }
        let windowEnd = ContinuousClock.now.advanced(by: remote.earlyRelinquishWindow)
        do {
            if let deadline = context.deadline, deadline <= windowEnd { return try acquire(context) }
            var bounded = context
            bounded.deadline = windowEnd
            do {
                return try acquire(bounded)
            } catch .timedOut {
                giveBackEarlyRelinquishments()
                return try acquire(context)
            }
        } catch {
            giveBackEarlyRelinquishments()
            throw error
        }
    }
}
