/// Which of a runtime's presenters may have unsaved changes, so other processes skip asking a
/// process whose presenters have none to save (Docs/RemotePresenters.md, *The clean mark*).
///
/// Every registered presenter counts as "may have unsaved changes" — Apple's `NSFilePresenter`
/// cannot say otherwise — except one that reports its own state (`CloudDocument` does, through
/// `CoordinationRuntime.presenter(_:hasUnsavedChanges:)`) and last said it had none. While no
/// registered presenter may have unsaved changes, the process's slot carries the clean mark, and
/// a reader in another process does not send it save requests.
///
/// Why skipping is safe: a presenter answers a save request by saving what is unsaved when the
/// request arrives; one that has nothing unsaved answers at once without writing. A reporter sets
/// its state in the same critical section that makes its change count dirty, before the change
/// is visible anywhere else, and clears it only once its save is recorded (under the save's write
/// lock). So a reader that finds the mark set would have found the presenter clean had it asked;
/// an edit made after the reader looked is, as with any answer, for the next access.
struct UnsavedPresenters: Sendable {
    /// Registered presenters and whether each may have unsaved changes.
    var mayBeDirty: [PresenterID: Bool] = [:]
    /// How many of them may.
    var dirtyCount = 0

    /// Sets `id`'s state (only for a registered presenter); returns whether every one is clean.
    mutating func set(_ id: PresenterID, dirty: Bool) -> Bool {
        if let old = mayBeDirty[id], old != dirty {
            mayBeDirty[id] = dirty
            dirtyCount += dirty ? 1 : -1
        }
        return dirtyCount == 0
    }
}

extension RemotePresence {
    /// A presenter was registered: it may have unsaved changes until it says otherwise.
    func presenterAdded(_ id: PresenterID) {
        let claim = currentClaim
        unsaved.withLock { unsaved in
            if unsaved.mayBeDirty[id] == nil {
                unsaved.mayBeDirty[id] = true
                unsaved.dirtyCount += 1
            }
            claim?.markClean(unsaved.dirtyCount == 0)
        }
    }

    /// A presenter was unregistered.
    func presenterRemoved(_ id: PresenterID) {
        let claim = currentClaim
        unsaved.withLock { unsaved in
            if let dirty = unsaved.mayBeDirty.removeValue(forKey: id), dirty { unsaved.dirtyCount -= 1 }
            claim?.markClean(unsaved.dirtyCount == 0)
        }
    }

    /// A registered presenter says whether it has unsaved changes now. Ignored for a presenter
    /// not registered in this runtime.
    func report(_ id: PresenterID, hasUnsavedChanges dirty: Bool) {
        let claim = currentClaim
        unsaved.withLock { unsaved in
            let clean = unsaved.set(id, dirty: dirty)
            claim?.markClean(clean)
        }
    }

    /// False only when the process of `id`, found by a lookup, carries the clean mark: none of
    /// its presenters has unsaved changes, and a save request to it would be answered at once
    /// with nothing saved.
    func mayHaveUnsavedChanges(_ id: PresenterID) -> Bool {
        guard let table = table(), let slot = delivery.slot(of: id) else { return true }
        return !table.isKnownClean(slot: slot, process: id.process)
    }
}
