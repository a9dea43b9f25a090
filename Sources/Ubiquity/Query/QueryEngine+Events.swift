import Foundation
import Glibc
import CloudDocuments
import FileCoordination
import SystemSupport

extension QueryEngine {
    /// Applies one read's reports (the loop reads at most ``maximumReads`` times a turn, so that a
    /// long burst of changes is delivered as it goes: the loop comes back at once while more is
    /// queued). The two halves of a rename (`IN_MOVED_FROM`, `IN_MOVED_TO`) are queued by one
    /// `rename`, one after the other, and a read can come between them: a first half read alone is
    /// held (``HeldRemovals``), and the second half makes it a change whenever it is read within
    /// the hold. An `IN_Q_OVERFLOW` is acted on once the turn's reads are done (``finishReading(readingQueued:)``).
    func apply(_ reports: [InotifyEvent]) {
        loop.assertInLoop()
        for report in reports {
            if report.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true; continue }
            if setsAsideMovedTo, report.mask & UInt32(IN_MOVED_TO) != 0 { asideMovedTo.append(report); continue }
            apply(report)
        }
    }

    /// Ends a turn's reading: with `readingQueued` (the loop did not read this turn), first reads
    /// and applies what the kernel has queued, without waiting, at most ``maximumReads`` times;
    /// then walks again after an overflow, and notes what is pending.
    func finishReading(readingQueued: Bool) {
        if readingQueued { loop.readQueued(maximumReads: Self.maximumReads) { apply($0) } }
        if overflowed { recoverFromOverflow() }
        reportWatchProblem()
        notePending()
    }

    /// Reads of 64 KiB (about 1,500 reports each) per turn of the loop.
    static let maximumReads = 16

    /// Tests: applies the second halves of renames set aside (``QueryEngineControl/Commands/setsAsideMovedTo``).
    func applyAsideMovedTo() {
        loop.assertInLoop()
        let reports = asideMovedTo
        asideMovedTo = []
        for report in reports { apply(report) }
        reportWatchProblem()
        notePending()
    }

    /// Ends the holds whose time is up: their removals are reported now.
    func endHolds() {
        loop.assertInLoop()
        for expired in held.expire(asOf: clock.now) {
            switch expired {
            case .deletion(let item): results.reportRemoval(item)
            case .move(let away): reportRemoval(of: away)
            }
        }
        notePending()
    }

    /// Reports a rename's first half whose second half never came (a move out of the scopes).
    func reportRemoval(of away: HeldRemovals.Move) {
        if let item = away.item { results.reportRemoval(item) }
        for item in away.subtree.values { results.reportRemoval(item) }
    }

    /// When a hold that starts now ends.
    private var holdDeadline: ContinuousClock.Instant { clock.now + settings.removalHold }

    private func apply(_ report: InotifyEvent) {
        let mask = report.mask
        if !statusWatches.isEmpty, applyStatusReport(report) { return }
        if mask & UInt32(IN_IGNORED) != 0 { watches.forget(report.descriptor); return }
        guard let folder = watches.path(for: report.descriptor) else { return }
        if mask & UInt32(IN_MOVE_SELF) != 0 {
            // A watched folder moved: if it was a root, everything under it left the scope.
            if settings.roots.contains(where: { $0.path == folder }) { recoverFromOverflow() }
            return
        }
        let name = report.name
        guard let first = name.utf8.first else { return }
        let isMovedTo = mask & UInt32(IN_MOVED_TO) != 0
        let path = SyncFolderListing.join(folder, name)
        guard first != UInt8(ascii: "."), let root = root(containing: path) else {
            // Renamed to a hidden name or out of the scopes: gone now, not when the hold ends.
            if isMovedTo, let away = held.takeMove(cookie: report.cookie) { reportRemoval(of: away) }
            // A placeholder came or went: its item is evicted now, or downloaded, or gone.
            if first == UInt8(ascii: "."), let itemName = ItemPlaceholder.itemName(forPlaceholderNamed: name),
               let root = root(containing: SyncFolderListing.join(folder, itemName)), root.isUbiquitous {
                refresh(folder: folder, name: itemName, root: root, previous: nil)
            }
            return
        }
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if mask & UInt32(IN_MOVED_FROM) != 0 {
            var away = HeldRemovals.Move(item: results.detach(folder: folder, name: name))
            if isFolder {
                away.folderPath = path
                away.subtree = results.detachSubtree(of: path)
                watches.removeSubtree(path)
                conflictCopies.removeSubtree(path)
            } else {
                conflictCopies.remove(name, in: folder)
                updateConflicts(ofCopy: name, in: folder)
            }
            if let earlier = held.holdMove(away, cookie: report.cookie, until: holdDeadline) { reportRemoval(of: earlier) }
        } else if mask & UInt32(IN_DELETE) != 0 {
            if isFolder {
                results.remove(folder: folder, name: name)
                for item in results.detachSubtree(of: path).values { results.reportRemoval(item) }
                watches.removeSubtree(path)
                conflictCopies.removeSubtree(path)
            } else if root.isUbiquitous, results.item(inFolder: folder, named: name) != nil,
                      ItemStamp.evicted(name, in: folder) != nil {
                // Evicted: the same item, now only a placeholder.
                refresh(folder: folder, name: name, root: root, previous: nil)
            } else {
                conflictCopies.remove(name, in: folder)
                if let item = results.detach(folder: folder, name: name),
                   let earlier = held.holdDeletion(item, at: path, until: holdDeadline) {
                    results.reportRemoval(earlier)
                }
                updateConflicts(ofCopy: name, in: folder)
            }
        } else if mask & UInt32(IN_CREATE) != 0 || isMovedTo {
            let away = isMovedTo ? held.takeMove(cookie: report.cookie) : nil
            // A file deleted from this name a moment ago: this is the same item, changed (unless
            // a result moved here, or a folder took the name: then that file is gone).
            var previous = away?.item
            if let deleted = held.takeDeletion(at: path) {
                if previous == nil, !isFolder, !deleted.isFolder { previous = deleted } else { results.reportRemoval(deleted) }
            }
            if !isFolder { conflictCopies.insert(name, in: folder) }
            refresh(folder: folder, name: name, root: root, previous: previous)
            guard isFolder, root.includes(folder: path) else { return }
            var subtree = away?.subtree ?? [:]
            walk(from: path, root: root, reuse: { found in
                let relative = String(found.dropFirst(path.count + 1))
                return subtree.removeValue(forKey: ExactName(relative))
            })
            for item in subtree.values { results.reportRemoval(item) }
        } else {
            refresh(folder: folder, name: name, root: root, previous: nil)
        }
    }

    /// Examines `folder/name` again and updates the results: added, changed, removed or nothing.
    /// `previous`: the item it was before a rename (it keeps that identifier).
    func refresh(folder: String, name: String, root: ScopeRoot, previous: MetadataItem?) {
        if SyncInternalItems.item(named: name) != nil {
            if let previous { results.reportRemoval(previous) }   // renamed to a temporary name
            return
        }
        if updateConflicts(ofCopy: name, in: folder) {
            if let previous { results.reportRemoval(previous) }
            results.remove(folder: folder, name: name)
            return
        }
        let path = SyncFolderListing.join(folder, name)
        guard let stamp = PathBytes.withCString(path, { ItemStatReader.stamp(in: AT_FDCWD, $0) })
                ?? (root.isUbiquitous ? ItemStamp.evicted(name, in: folder) : nil) else {
            results.remove(folder: folder, name: name)
            if let previous { results.reportRemoval(previous) }
            return
        }
        let existing = results.item(inFolder: folder, named: name)
        // A known item keeps its flag (copies coming and going update it); a new or moved one is looked up.
        let hasConflicts: Bool
        if previous == nil, let existing { hasConflicts = existing.hasUnresolvedConflicts } else { hasConflicts = hasConflictCopies(name, in: folder) }
        consider(folder: folder, name: name, stamp: stamp, hasConflicts: hasConflicts, root: root, previous: previous)
    }

    /// If `name` is (or was) a sync tool's conflict copy, brings the has-unresolved-conflicts flag
    /// of each original it may belong to up to date. Returns whether `name` is a conflict copy
    /// now. Call it after ``conflictCopies`` knows whether `name` is in the folder.
    @discardableResult
    func updateConflicts(ofCopy name: String, in folder: String) -> Bool {
        guard ResultNameFilter.mayBeConflictCopy(name.utf8) else { return false }
        var isCopy = false
        for original in SyncConflictNaming.possibleOriginals(ofCopyNamed: name) {
            let group = conflictGroup(of: original, in: folder)
            let hasCopies = group.map { !$0.copies.isEmpty } ?? false
            if var item = results.item(inFolder: folder, named: original), item.hasUnresolvedConflicts != hasCopies {
                if hasCopies { item.flags.insert(.conflicts) } else { item.flags.remove(.conflicts) }
                results.upsert(item)
            }
            if group?.copies.contains(where: { PathBytes.haveSameBytes($0.name, name) }) == true { isCopy = true }
        }
        return isCopy
    }

    /// Whether the file or folder `name` in `folder` has conflict copies beside it.
    func hasConflictCopies(_ name: String, in folder: String) -> Bool {
        conflictGroup(of: name, in: folder).map { !$0.copies.isEmpty } ?? false
    }

    /// The conflict group of `original` in `folder`, from the names known to be possible copies
    /// of it (``ConflictCopyIndex``) and `statx` of the few other names the rules ask about: the
    /// cost does not grow with the folder.
    private func conflictGroup(of original: String, in folder: String) -> SyncConflictGroup? {
        let copies = conflictCopies.copies(of: original, in: folder)
        guard !copies.isEmpty else { return nil }
        return SyncConflictNaming.conflictGroup(of: original, amongCopies: copies) { name in
            PathBytes.withCString(SyncFolderListing.join(folder, name)) { ItemStatReader.stamp(in: AT_FDCWD, $0) } != nil
        }
    }
}
