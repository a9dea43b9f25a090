import Foundation
import Glibc
import FileCoordination
import SystemSupport

extension QueryEngine {
    /// The first half of a rename whose second half has not been read yet.
    struct MovedAway {
        var item: MetadataItem?
        /// For a folder: its own path and the items inside it, by path relative to it.
        var folderPath: String?
        var subtree: [ExactName: MetadataItem] = [:]
    }

    /// Reads and applies everything the kernel has queued. The two halves of a rename
    /// (`IN_MOVED_FROM`, `IN_MOVED_TO`) are queued by one `rename`, but one after the other: a
    /// read can come between them (a busy machine, the renaming process descheduled). A first half
    /// left over once the queue is empty gets one short wait (`renamePartnerWait`) for its second
    /// half; if none comes, it was a move out of the scopes (a removal). Without the wait, a
    /// rename was sometimes reported as a removal and an addition.
    func readEvents(into buffer: UnsafeMutableRawPointer) {
        var moved: [UInt32: MovedAway] = [:]
        var overflowed = false
        var waitedForPartner = false
        while true {
            let count = read(inotify, buffer, 64 * 1024)
            if count <= 0 {
                guard !moved.isEmpty, !waitedForPartner else { break }
                waitedForPartner = true
                var descriptor = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, Self.renamePartnerWaitMilliseconds) > 0 { continue }
                break
            }
            for report in InotifyEvent.decode(buffer, count: count) {
                if report.mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true; continue }
                apply(report, moved: &moved)
            }
        }
        for away in moved.values {
            if let item = away.item { results.reportRemoval(item) }
            for item in away.subtree.values { results.reportRemoval(item) }
        }
        if overflowed { recoverFromOverflow() }
        reportWatchProblem()
        notePending()
    }

    /// How long a rename's first half waits for its second (at most once per read of the queue,
    /// and only when a first half is left over): far longer than the microseconds between the two
    /// halves of one `rename`, short enough that a move out of the scopes is reported at once.
    static let renamePartnerWaitMilliseconds: Int32 = 100

    private func apply(_ report: InotifyEvent, moved: inout [UInt32: MovedAway]) {
        let mask = report.mask
        if mask & UInt32(IN_IGNORED) != 0 { watches.forget(report.descriptor); return }
        guard let folder = watches.path(for: report.descriptor) else { return }
        if mask & UInt32(IN_MOVE_SELF) != 0 {
            // A watched folder moved: if it was a root, everything under it left the scope.
            if settings.roots.contains(where: { $0.path == folder }) { recoverFromOverflow() }
            return
        }
        let name = report.name
        guard let first = name.utf8.first, first != UInt8(ascii: ".") else { return }
        let path = SyncFolderListing.join(folder, name)
        guard let root = root(containing: path) else { return }
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if mask & UInt32(IN_MOVED_FROM) != 0 {
            var away = MovedAway(item: results.detach(folder: folder, name: name))
            if isFolder {
                away.folderPath = path
                away.subtree = results.detachSubtree(of: path)
                watches.removeSubtree(path)
            } else {
                updateConflicts(ofCopy: name, in: folder)
            }
            moved[report.cookie] = away
        } else if mask & UInt32(IN_DELETE) != 0 {
            results.remove(folder: folder, name: name)
            if isFolder {
                for item in results.detachSubtree(of: path).values { results.reportRemoval(item) }
                watches.removeSubtree(path)
            } else {
                updateConflicts(ofCopy: name, in: folder)
            }
        } else if isFolder, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
            let away = mask & UInt32(IN_MOVED_TO) != 0 ? moved.removeValue(forKey: report.cookie) : nil
            refresh(folder: folder, name: name, root: root, previous: away?.item)
            guard root.includes(folder: path) else { return }
            var subtree = away?.subtree ?? [:]
            walk(from: path, root: root, reuse: { found in
                let relative = String(found.dropFirst(path.count + 1))
                return subtree.removeValue(forKey: ExactName(relative))
            })
            for item in subtree.values { results.reportRemoval(item) }
        } else {
            let away = mask & UInt32(IN_MOVED_TO) != 0 ? moved.removeValue(forKey: report.cookie) : nil
            refresh(folder: folder, name: name, root: root, previous: away?.item)
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
        guard let stamp = PathBytes.withCString(path, { ItemStatReader.stamp(in: AT_FDCWD, $0) }) else {
            results.remove(folder: folder, name: name)
            if let previous { results.reportRemoval(previous) }
            return
        }
        let existing = results.item(inFolder: folder, named: name)
        // A known item keeps its flag (copies coming and going update it); a new or moved one is looked up.
        let hasConflicts: Bool
        if previous == nil, let existing { hasConflicts = existing.hasUnresolvedConflicts } else { hasConflicts = Self.hasConflictCopies(name, in: folder) }
        consider(folder: folder, name: name, stamp: stamp, hasConflicts: hasConflicts, root: root, previous: previous)
    }

    /// If `name` is (or was) a sync tool's conflict copy, brings its original's
    /// has-unresolved-conflicts flag up to date. Returns whether `name` is a conflict copy now.
    @discardableResult
    func updateConflicts(ofCopy name: String, in folder: String) -> Bool {
        guard let copy = SyncConflictNaming.conflictCopy(named: name) else { return false }
        let candidates = SyncFolderListing.candidateNames(inFolder: folder, forOriginal: copy.originalName) ?? []
        let group = SyncConflictNaming.conflictGroup(of: copy.originalName, in: candidates)
        let hasCopies = group.map { !$0.copies.isEmpty } ?? false
        if var original = results.item(inFolder: folder, named: copy.originalName), original.hasUnresolvedConflicts != hasCopies {
            if hasCopies { original.flags.insert(.conflicts) } else { original.flags.remove(.conflicts) }
            results.upsert(original)
        }
        // A legacy OneDrive-style name whose original is absent is an ordinary file.
        return group?.copies.contains { $0.name == name } ?? (copy.scheme != .oneDriveLegacy)
    }

    static func hasConflictCopies(_ name: String, in folder: String) -> Bool {
        guard let candidates = SyncFolderListing.candidateNames(inFolder: folder, forOriginal: name) else { return false }
        if candidates.count <= 1 { return false }
        return SyncConflictNaming.conflictGroup(of: name, in: candidates).map { !$0.copies.isEmpty } ?? false
    }
}
