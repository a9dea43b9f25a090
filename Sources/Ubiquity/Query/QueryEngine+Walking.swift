import Foundation
import Glibc
import CloudDocuments
import FileCoordination
import SystemSupport

extension QueryEngine {
    /// The initial walk of every scope, with gathering-progress events every 250 ms.
    func gather() {
        var lastProgress = clock.now
        for root in settings.roots {
            walk(from: root.path, root: root, reuse: { _ in nil }, gathering: true, onFolderDone: { [self] in
                guard clock.now - lastProgress >= .milliseconds(250) else { return true }
                lastProgress = clock.now
                if control.commands.withLock({ $0.stop }) { return false }
                settings.output(QueryEngineOutput(event: .gatheringProgress, results: results.ordered))
                return true
            })
        }
        results.finishGathering()
    }

    /// Walks the tree under `top` (a folder in `root`): watches each folder before reading it, so
    /// that nothing made while walking is missed (it is reported by the kernel afterwards), and puts
    /// each entry that is a result in. `reuse(path)` gives an item this one was before (same
    /// identifier: a change, not an addition). `onFolderDone` is called after each folder; false stops.
    /// Returns the folders walked and watched.
    @discardableResult
    func walk(from top: String, root: ScopeRoot, reuse: (String) -> MetadataItem?, gathering: Bool = false,
              onFolderDone: () -> Bool = { true }, seen: ((String) -> Void)? = nil) -> [String] {
        loop.assertInLoop()
        var stack = [top]
        var walked: [String] = []
        while let folder = stack.popLast() {
            if watches.add(folder) { walked.append(folder) }
            let descriptor = PathBytes.withCString(folder) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            guard descriptor >= 0, let stream = fdopendir(descriptor) else {
                if descriptor >= 0 { close(descriptor) }
                continue
            }
            // Names the sync-tool rules must look at: their folder's listing is needed for conflicts.
            var entries: [(name: String, stamp: ItemStamp, special: Bool)] = []
            var copyLikeNames: [String] = []
            var placeholders = FolderPlaceholders()
            while let entry = readdir(stream) {
                withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                    let bytes = raw.prefix(while: { $0 != 0 })
                    // Hidden names (and `.`, `..`) are never results, nor walked; an evicted
                    // item's placeholder stands for the item under its real name (read below).
                    guard let first = bytes.first, first != UInt8(ascii: ".") else {
                        // A regular file (or a type the file system does not tell) may be one.
                        let type = entry.pointee.d_type
                        if root.isUbiquitous, type == UInt8(DT_REG) || type == UInt8(DT_UNKNOWN) {
                            placeholders.add(bytes, inode: UInt64(entry.pointee.d_ino))
                        }
                        return
                    }
                    let isInternal = ResultNameFilter.mayBeInternal(bytes)
                    let isCopy = ResultNameFilter.mayBeConflictCopy(bytes)
                    if isCopy { copyLikeNames.append(PathBytes.string(fromBytes: bytes)) }
                    guard let stamp = ItemStatReader.stamp(in: descriptor, raw.baseAddress!.assumingMemoryBound(to: CChar.self)) else { return }
                    entries.append((PathBytes.string(fromBytes: bytes), stamp, isInternal || isCopy))
                }
            }
            // An evicted item is a result when its real name is free (both there: a download or
            // an eviction was cut short, and the real file is the item).
            if !placeholders.isEmpty {
                let present = entries.isEmpty ? [] : Set(entries.map { ExactName($0.name) })
                for placeholder in placeholders.read(in: descriptor, folder: folder) where placeholder.name != "." && placeholder.name != ".."
                    && !present.contains(ExactName(placeholder.name)) {
                    entries.append((placeholder.name, placeholder.stamp, false))
                }
            }
            closedir(stream)
            // Kept for live updates: whether an item has copies is then a lookup, not a listing.
            if !copyLikeNames.isEmpty || !gathering { conflictCopies.replace(folder: folder, with: copyLikeNames) }
            var groups: [String: SyncConflictGroup] = [:]
            var copies: Set<String> = []
            if !copyLikeNames.isEmpty {
                groups = SyncConflictNaming.conflictGroups(in: entries.map(\.name))
                for group in groups.values { for copy in group.copies { copies.insert(copy.name) } }
            }
            var gathered: [MetadataItem] = []
            if gathering { gathered.reserveCapacity(entries.count) }
            for (name, stamp, special) in entries {
                if special, copies.contains(name) || SyncInternalItems.item(named: name) != nil { continue }
                if stamp.isFolder || seen != nil {
                    let path = SyncFolderListing.join(folder, name)
                    if stamp.isFolder, !stamp.isEvicted {
                        guard root.includes(folder: path) else { continue }
                        stack.append(path)
                    }
                    seen?(path)
                }
                let hasCopies = !groups.isEmpty && groups[name].map { !$0.copies.isEmpty } ?? false
                if gathering {
                    var item = MetadataItem(id: 0, folderPath: folder, name: name, stamp: stamp, flags: Self.flags(root, hasCopies))
                    guard settings.predicate.evaluate(item) else { continue }
                    item.id = results.makeIdentifier()
                    gathered.append(item)
                } else {
                    consider(folder: folder, name: name, stamp: stamp, hasConflicts: hasCopies, root: root,
                             previous: reuse(SyncFolderListing.join(folder, name)))
                }
            }
            results.addGathered(gathered, inFolder: folder)
            if !onFolderDone() { break }
        }
        return walked
    }

    /// Puts the item `folder/name` in the results if the predicate accepts it (as `previous`, when
    /// given: same identifier), or takes it out if it was in and is no longer accepted.
    func consider(folder: String, name: String, stamp: ItemStamp, hasConflicts: Bool, root: ScopeRoot, previous: MetadataItem?) {
        let existing = results.item(inFolder: folder, named: name)
        var item = MetadataItem(id: 0, folderPath: folder, name: name, stamp: stamp, flags: Self.flags(root, hasConflicts))
        if root.isUbiquitous, !transferStates.isEmpty { item.transfer = transferState(of: SyncFolderListing.join(folder, name)) }
        if settings.predicate.evaluate(item) {
            item.id = previous?.id ?? existing?.id ?? results.makeIdentifier()
            results.upsert(item)
        } else {
            if existing != nil { results.remove(folder: folder, name: name) }
            if let previous { results.reportRemoval(previous) }
        }
    }

    static func flags(_ root: ScopeRoot, _ hasConflicts: Bool) -> MetadataItem.Flags {
        var flags: MetadataItem.Flags = []
        if root.isUbiquitous { flags.insert(.ubiquitous) }
        if hasConflicts { flags.insert(.conflicts) }
        return flags
    }

    /// After the kernel's queue overflowed (events were lost): walks every scope again and makes
    /// the results match what is there — new items added, different ones changed, missing ones
    /// removed, each once — and watches exactly the folders found.
    func recoverFromOverflow() {
        loop.assertInLoop()
        // Whatever is still queued predates the rescan, which sees its effects anyway.
        loop.discardQueued()
        overflowed = false
        // Renames whose second halves were thrown away: the moved items are found again as new.
        for away in held.takeAllMoves() { reportRemoval(of: away) }
        var seen: Set<ExactName> = []
        var folders: Set<ExactName> = []
        for root in settings.roots {
            // A file deleted a moment ago and there again is the same item, changed.
            let walked = walk(from: root.path, root: root, reuse: { [self] in held.takeDeletion(at: $0) },
                              seen: { seen.insert(ExactName($0)) })
            folders.formUnion(walked.map(ExactName.init))
        }
        for (folder, name) in results.allNames() where !seen.contains(ExactName(SyncFolderListing.join(folder, name))) {
            results.remove(folder: folder, name: name)
        }
        watches.removeAll(except: folders)
        conflictCopies.removeAll(except: folders)
        if !settings.agentStatus.isEmpty { refreshAllTransfers() }
        notePending()
    }
}
