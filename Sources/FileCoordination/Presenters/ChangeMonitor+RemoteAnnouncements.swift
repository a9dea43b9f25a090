import Foundation
import SystemSupport

// The change monitor and coordinators of *other* processes (Docs/RemotePresenters.md). A
// coordinated write made by another process is announced twice to a presenter here: by that
// process's coordinator (`presentedItemDidChange`, through this process's endpoint) and by this
// process's change monitor, which sees the kernel's report of the same write. One must win:
//
// - whichever comes first reports the change and records the item's stamp (the monitor in
//   `State.reportedStamps`, the message by renewing `State.stamps`);
// - the monitor skips a stamp already seen (as for any report), and a message skips a change
//   whose stamp the monitor has just reported.
//
// A coordinated deletion by another process is announced by its coordinator before the delete
// (`accommodatePresentedItemDeletion`): the item's stamp is set to "missing" at once, so the
// monitor does not report the deletion again once the item is gone.
//
// Moves need nothing here: the registry re-keys the presenters, which unwatches the old path, so
// the monitor's report of the rename finds nothing presented there (and a message arriving after
// the monitor's own report finds nothing left to move).

extension ChangeMonitor {
    /// Records the stamp of a change the monitor reports (its lock held).
    static func noteReported(_ path: String, stamp: FileIdentity, in state: inout State) {
        if state.reportedStamps.count >= 4096 { state.reportedStamps.removeAll() }
        state.reportedStamps[path] = stamp
    }

    /// A coordinator of another process announces that it changed the item at `path`. Returns
    /// false when the monitor already reported this very change (the item's stamp is the one it
    /// reported); otherwise renews the stamp, so the kernel's report of the change read later is
    /// not passed on, and returns true.
    func claimAnnouncedChange(_ path: String) -> Bool {
        let stamp = Self.stamp(of: path)
        return state.withLock { state in
            guard state.stamps[path] != nil else { return true }  // not watched: nothing to skip
            if state.reportedStamps.removeValue(forKey: path) == stamp { return false }
            state.stamps[path] = stamp
            return true
        }
    }

    /// A coordinator of another process is about to delete the item at `path` (its presenters are
    /// asked to accommodate the deletion): the item counts as missing already, so its deletion is
    /// not reported again.
    func noteAnnouncedDeletion(_ path: String) {
        state.withLock { state in
            guard state.stamps[path] != nil else { return }
            state.stamps[path] = .missing
            state.reportedStamps.removeValue(forKey: path)
        }
    }
}
