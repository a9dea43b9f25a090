import Foundation

extension PresenterMessenger {
    // MARK: Before the locks: requests to other processes that may make them coordinate

    /// Asks presenters in other processes to save (a read that may see changes, a write
    /// `.forMerging`) and to accommodate a deletion (a delete or replace of an existing item:
    /// presenters of the item and inside it, then those of the folders above it) — **before** any
    /// lock of the access is taken.
    ///
    /// A presenter answers such a request by coordinating (a CloudDocument saves through a
    /// coordinated write, and closes on its main actor). Asked before the asker holds anything, it
    /// takes its own locks and never needs the asker's: no lock crosses a process boundary, and
    /// no process waits for another process's answer while holding a lock that answer may need
    /// (Docs/RemotePresenters.md, invariants 1 and 2). What the presenter saved is on disk when
    /// the asker's lock is granted; an edit made after its answer is, like any later edit, for
    /// the next access. A presenter that answers with an error vetoes the access (nothing is
    /// locked; the error is `.presenterFailed`). Without a timeout, each answer is awaited at most
    /// `RemotePresence.answerLimit`.
    ///
    /// When this thread holds no coordinated access, presenters *of this process* are asked to
    /// save here too (they are then not asked again with the locks held): their save takes a lock
    /// of its own, with nobody to wait for, instead of joining the asker's lent lock — which could
    /// meet another save of the same document upgrading its own read (`.wouldDeadlock`). Inside
    /// an accessor (a nested coordination) they are asked with the locks held, lending them, as
    /// before: their save may need the outer locks.
    mutating func askOtherProcessesBeforeLocking(_ accesses: [ResolvedAccess]) throws(CoordinationError) {
        if ThreadClaims.holdsNothing && !directory.nobodyHere {
            let local = unique(accesses.filter(Self.asksForSaves).flatMap { presentersConcerned(by: $0) })
            try askRetryingUpgradeConflicts(local.map { ($0, .saveChanges) }, lending: false)
            savedBeforeLocking = Set(local.map(\.id))
        }
        let savesAsked = remote.asksForSaves
        var concerned: [ResolvedAccess] = []
        for access in accesses where (savesAsked && Self.asksForSaves(access)) || access.deletes || access.evicts {
            // No other process can present the item, a folder above it or anything inside it
            // (a few loads): nothing to ask, and no `lstat`.
            guard directory.mayPresentElsewhere(at: access.itemPath) || directory.mayPresentElsewhere(inside: access.itemPath)
                    || (isPackageAccess(access) && directory.mayPresentElsewhere(inside: access.lockPath)) else { continue }
            // What the item is, looked at now: the answer only chooses whom to ask (the locks,
            // taken next, decide what the access itself does).
            var probe = access
            probe.inspectNow()
            if (probe.deletes || probe.evicts) && !probe.existedBefore && !(savesAsked && Self.asksForSaves(probe)) { continue }
            if concernsOtherProcesses(probe) { concerned.append(probe) }
        }
        if !concerned.isEmpty { try askSavesAndDeletionsElsewhere(concerned) }
        try relinquishElsewhereBeforeLocking(accesses)
    }

    /// The save, deletion and eviction requests of `askOtherProcessesBeforeLocking` to presenters
    /// in other processes, for the accesses that concern them.
    private func askSavesAndDeletionsElsewhere(_ concerned: [ResolvedAccess]) throws(CoordinationError) {
        let savesAsked = remote.asksForSaves
        let endMainQueueWait = recordMainQueueWait(concerned)
        defer { endMainQueueWait?() }
        var savers: [PresenterAddress] = []
        var deleted: [PresenterAddress] = []
        var evicted: [PresenterAddress] = []
        var subitemDeletions: [(PresenterAddress, URL)] = []
        for access in concerned {
            let found = try lookUpElsewhere(for: access)
            if savesAsked && Self.asksForSaves(access) {
                savers += presentersConcerned(by: access, foundElsewhere: found)
            }
            if access.evicts && access.existedBefore {
                evicted += found.presenters(at: access.itemPath) + found.presenters(inside: access.itemPath)
            }
            if access.deletes && access.existedBefore {
                deleted += found.presenters(at: access.itemPath) + found.presenters(inside: access.itemPath)
                let url = CanonicalPath.url(for: access.itemPath)
                subitemDeletions += found.presenters(above: access.itemPath).map { ($0, url) }
            }
        }
        // A process whose presenters are all free of unsaved changes would answer at once with
        // nothing saved: not asked (its clean mark, RemotePresence+Clean).
        try askRetryingUpgradeConflicts(unique(savers).filter { remote.mayHaveUnsavedChanges($0.id) }.map { ($0, .saveChanges) })
        try ask(unique(deleted).map { ($0, .accommodateDeletion) })
        try ask(unique(evicted).map { ($0, .accommodateEviction) })
        var askedSubitem = Set<PresenterID>()
        try ask(subitemDeletions.filter { !isOwn($0.0) && askedSubitem.insert($0.0.id).inserted }
            .map { ($0.0, .accommodateSubitemDeletion(at: $0.1)) })
    }
}
