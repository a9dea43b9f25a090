import Foundation
import Glibc

// The change monitor's part in following presented items that programs which do not coordinate
// (`mv`, `rm`, a sync tool) rename, move or delete.
//
// **Moves.** The kernel reports a rename as two halves, `IN_MOVED_FROM` in the old folder and
// `IN_MOVED_TO` in the new one, with the same cookie. When the old half names a presented item,
// the new half is in a watched folder (the same one or the folder of another presented item) and
// nothing is under the old name any more (otherwise the item was replaced, not moved), the
// item moved: the monitor announces it exactly as a coordinator's `item(at:didMoveTo:)` does
// (it calls it, with a coordinator that has no presenter), so the registry re-keys the presenters
// of the item and of everything inside it, coordinations waiting for the old path follow it, and
// each presenter gets `presentedItemDidMove(to:)` on its queue. An old half whose new half is
// not in the same read is kept by its cookie until the item's deletion is decided (below): a late
// new half is still a move. Sync tools' names — as the registered `SyncToolPolicy` knows them —
// are not new places: a rename to a conflict copy's name keeps the item's contents as a version
// (ChangeMonitor+ConflictCopies.swift), and a rename to a temporary name (Syncthing: `NAME` →
// `.syncthing.NEW.tmp` → `NEW`) is followed when it reaches its final name.
//
// **Deletions.** A presented item found missing is not reported at once: a sync tool may be
// replacing it by deleting it and renaming its temporary file to its name (Syncthing does, with
// both steps in the same or the next read). Once the item's folder has gone
// `deletionGraceInterval` without any report of the kernel (at most `deletionWaitLimit` after the
// item went missing, however busy the folder is), the monitor looks again: an item still missing
// is deleted (or moved out of every watched folder) and its presenters get
// `accommodatePresentedItemDeletion(completionHandler:)` (their answer is not awaited: the item is
// already gone); an item that is back is a change (`presentedItemDidChange()`). An item missing
// while conflict copies of it are present whose tool leaves the original missing (rclone bisync)
// is not deleted: the tool renamed it, and the policy settles the conflict (promotes one of the
// copies to its name).
//
// Moves and deletions made by a coordinator of this runtime are not reported from the kernel's
// events: that coordinator announces them itself.

extension ChangeMonitor {
    /// How long an item's folder must stay quiet after the item went missing before its deletion
    /// is reported. Syncthing's delete and rename follow each other within a millisecond (the same
    /// or the next read); 200 ms leaves room for a loaded machine while a document still closes
    /// well within a second of `rm`.
    static let deletionGraceInterval: TimeInterval = 0.2

    /// The longest a deletion is put off by a folder that never goes quiet (a sync tool writing
    /// many other files in it).
    static let deletionWaitLimit: TimeInterval = 2

    /// Where deletion checks wait and run.
    static let deletionChecks = DispatchQueue(label: "FileCoordination.deletionChecks")

    /// The presented items one read's reports moved: their old paths and their new ones.
    struct FollowedMoves {
        var sources: Set<String> = []
        var destinations: Set<String> = []
    }

    /// Pairs the halves of renames in `reports` (and with halves kept from earlier reads) and
    /// announces each move of a presented item to a watched folder, in the order of the reports.
    /// `mayFinishMoves`: halves were kept from earlier reads (otherwise a second half alone, as
    /// in every save's rename to its document's name, pairs with nothing and costs nothing).
    func followMoves(in reports: [Report], mayFinishMoves: Bool) -> FollowedMoves {
        guard mayFinishMoves || reports.contains(where: { $0.mask & UInt32(IN_MOVED_FROM) != 0 && $0.cookie != 0 }) else {
            return FollowedMoves()
        }
        var arrivals: [UInt32: String] = [:]
        for report in reports where report.mask & UInt32(IN_MOVED_TO) != 0 && report.cookie != 0 {
            arrivals[report.cookie] = report.path
        }
        var followed = FollowedMoves()
        for report in reports where report.mask & UInt32(IN_MOVED_FROM) != 0 && report.cookie != 0 {
            let new = arrivals.removeValue(forKey: report.cookie)
            let old: String?
            switch report.subject {
            case .watched(let path):
                old = path
                if new == nil {
                    // The new half may come in the next read; meanwhile the item is missing.
                    state.withLock { state in
                        if state.unmatchedMoves.count >= 1024 { state.unmatchedMoves.removeAll() }
                        state.unmatchedMoves[report.cookie] = path
                    }
                }
            case .other:
                // A presented item's temporary name from an earlier rename, moving on.
                old = new == nil ? nil : state.withLock { state in
                    state.temporaries.isEmpty ? nil : state.temporaries.removeValue(forKey: report.path)
                }
            }
            if let old, let new { follow(from: old, to: new, into: &followed) }
        }
        if !arrivals.isEmpty {
            let late: [(old: String, new: String)] = state.withLock { state in
                guard !state.unmatchedMoves.isEmpty else { return [] }
                return arrivals.compactMap { cookie, new in state.unmatchedMoves.removeValue(forKey: cookie).map { ($0, new) } }
            }
            for move in late { follow(from: move.old, to: move.new, into: &followed) }
        }
        return followed
    }

    /// One rename of a presented item from `old` to `new`.
    private func follow(from old: String, to new: String, into followed: inout FollowedMoves) {
        // Something already back under the old name means the item there was replaced (an
        // exchange of two names, or a rename aside followed by a rename into place, as safe
        // saves do): a change of the item, not a move.
        guard old != new, Self.stamp(of: old) == .missing else { return }
        switch Self.destinationKind(new) {
        case .conflictCopy:
            // A sync tool keeping the item's contents as a conflict copy (Syncthing, rclone
            // bisync): a version of the item (ChangeMonitor+ConflictCopies.swift), not its new place.
            return
        case .temporary:
            // A sync tool's rename goes through a temporary name (Syncthing: `NAME` →
            // `.syncthing.NEW.tmp` → `NEW`): followed when it reaches its final name.
            state.withLock { state in
                if state.temporaries.count >= 1024 { state.temporaries.removeAll() }
                state.temporaries[new] = old
            }
        case .final:
            followed.sources.insert(old)
            followed.destinations.insert(new)
            announceMove(from: old, to: new)
        }
    }

    private enum DestinationKind { case final, temporary, conflictCopy }

    private static func destinationKind(_ path: String) -> DestinationKind {
        let name = CanonicalPath.split(path).name
        let policy = CoordinationRuntime.syncToolPolicy
        if policy.isInternalItem(named: name) { return .temporary }
        if policy.conflictCopy(named: name) != nil { return .conflictCopy }
        return .final
    }

    /// True when the folder of `path` holds a conflict copy of it whose tool leaves the original
    /// missing (``SyncToolConflictCopy/leavesOriginalMissing``, rclone bisync's `NAME..path1`): no
    /// file is under the real name until the policy settles the conflict
    /// (ChangeMonitor+ConflictCopies.swift), which is not a deletion.
    static func hasCopiesLeavingOriginalMissing(of path: String, in state: State) -> Bool {
        let (directory, name) = CanonicalPath.split(path)
        guard let copies = state.directories[directory]?.copyStamps, !copies.isEmpty else { return false }
        let policy = CoordinationRuntime.syncToolPolicy
        return copies.contains { copyName, stamp in
            guard stamp != .missing, let copy = policy.conflictCopy(named: copyName, amongOriginals: [name]) else { return false }
            return copy.leavesOriginalMissing && copy.originalName == name
        }
    }

    /// Announces that the presented item at `old` is now at `new` (canonical paths), unless a
    /// coordinator of this runtime is moving it (and announces it itself) or it is no longer
    /// presented there.
    private func announceMove(from old: String, to new: String) {
        let stillThere = state.withLock { state in
            !Self.isBeingWritten(old, in: state) && !Self.isBeingWritten(new, in: state) && state.stamps[old] != nil
        }
        guard stillThere, let runtime = target.withLock({ $0.runtime }) else { return }
        Coordinator(runtime: runtime).item(at: CanonicalPath.url(for: old), didMoveTo: CanonicalPath.url(for: new))
    }

    /// Reports the deletion of the presented item at `path` (found missing) once its folder has
    /// been quiet for ``deletionGraceInterval``, unless it is back by then. One check per item.
    func scheduleDeletionCheck(_ path: String) {
        let directory = CanonicalPath.split(path).parent
        let seen: UInt64? = state.withLock { state in
            guard let generation = state.directories[directory]?.generation,
                  state.pendingDeletions.insert(path).inserted else { return nil }
            return generation
        }
        guard let seen else { return }
        checkDeletionWhenQuiet(path, directory: directory, seen: seen, limit: .now() + Self.deletionWaitLimit)
    }

    private func checkDeletionWhenQuiet(_ path: String, directory: String, seen: UInt64, limit: DispatchTime) {
        Self.deletionChecks.asyncAfter(deadline: .now() + Self.deletionGraceInterval) { [self] in
            let now: UInt64? = state.withLock { state in
                guard let generation = state.directories[directory]?.generation else {
                    state.pendingDeletions.remove(path)  // no longer watched
                    return nil
                }
                return generation
            }
            guard let now else { return }
            if now != seen && DispatchTime.now() < limit {
                checkDeletionWhenQuiet(path, directory: directory, seen: now, limit: limit)
                return
            }
            let stamp = Self.stamp(of: path)
            let deleted = state.withLock { state -> Bool in
                guard stamp == .missing, state.stamps[path] == .missing, !Self.isBeingWritten(path, in: state),
                      !Self.hasCopiesLeavingOriginalMissing(of: path, in: state) else {
                    return false
                }
                state.unmatchedMoves = state.unmatchedMoves.filter { $0.value != path }
                state.temporaries = state.temporaries.filter { $0.value != path }
                return true
            }
            if deleted {
                announceDeletion(of: path)
            } else if stamp != .missing {
                deliverIfChanged(path)  // back (its reports may not be read yet): a change
            }
            // Only now: once no check is pending, every message of one has been sent.
            state.withLock { _ = $0.pendingDeletions.remove(path) }
        }
    }

    /// Sends `accommodatePresentedItemDeletion(completionHandler:)` to the presenters of `path`,
    /// on their queues; their answers are not awaited (the item is gone already).
    private func announceDeletion(of path: String) {
        let (registry, delivery) = target.withLock { ($0.registry, $0.delivery) }
        guard let registry, let delivery else { return }
        for address in registry.addresses(at: path) {
            delivery.send(PresenterRequest(presenter: address.id, presentedPath: address.path,
                                           message: .accommodateDeletion, borrow: nil),
                          answer: nil)
        }
    }
}

extension ChangeMonitor.Report {
    /// The canonical path of the entry reported.
    var path: String {
        switch subject {
        case .watched(let path): return path
        case .other(let directory): return CanonicalPath.join(directory, name)
        }
    }
}

extension CoordinationRuntime {
    /// True while the change monitor is deciding whether an item found missing was deleted, or
    /// waiting to announce a file made inside a presented folder (for tests: once false, every
    /// deletion and appearance it found has been sent to the presenters' queues).
    package var isCheckingDeletions: Bool {
        changeMonitor.state.withLock { !$0.pendingDeletions.isEmpty || !$0.settling.isEmpty }
    }
}
