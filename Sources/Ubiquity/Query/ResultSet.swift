import Foundation
import FileCoordination
import SystemSupport

/// The results of one query and what changed since they were last delivered. Owned by the
/// query's thread (`QueryEngine`); never shared, so unsynchronized.
///
/// Items are kept by folder, then by name: a folder's path is stored once, and a rename inside a
/// folder or a folder's subtree are cheap to find. `ordered` is the delivered order (the sort
/// keys, or the order found), brought up to date at each delivery in O(n) by merging.
struct ResultSet {
    /// folder path → name → item (paths and names compared by their bytes: ``ExactName``).
    private(set) var folders: [ExactName: FolderItems] = [:]
    private(set) var count = 0
    private var nextID: UInt64 = 1
    let sortKeys: [MetadataQuerySortKey]

    /// The results as last delivered.
    private(set) var ordered: [MetadataItem] = []

    /// Changes not delivered yet, by item identifier, coalesced: added then changed is added,
    /// added then removed is nothing, changed then removed is removed.
    private var added: [UInt64: MetadataItem] = [:]
    private var changed: [UInt64: MetadataItem] = [:]
    private var removed: [UInt64: MetadataItem] = [:]
    /// Items taken out by `detach` that are neither back nor reported removed yet.
    private var detached: Set<UInt64> = []
    var hasPendingChanges: Bool { !added.isEmpty || !changed.isEmpty || !removed.isEmpty }

    init(sortKeys: [MetadataQuerySortKey]) {
        self.sortKeys = sortKeys
    }

    func item(inFolder folder: String, named name: String) -> MetadataItem? {
        folders[ExactName(folder)]?[name]
    }

    mutating func makeIdentifier() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Puts `item` in (a new identifier: added; a known one: changed unless nothing differs; a
    /// detached one: changed, as it moved).
    mutating func upsert(_ item: MetadataItem) {
        let previous = folders[ExactName(item.folderPath), default: FolderItems()].updateValue(item)
        if let previous, previous.id != item.id {
            noteRemoved(previous)            // another item took this name (a rename over it)
        }
        if previous == nil { count += 1 }
        if detached.remove(item.id) != nil {
            if added[item.id] != nil { added[item.id] = item } else { changed[item.id] = item }
        } else if added[item.id] != nil {
            added[item.id] = item
        } else if let old = previous, old.id == item.id {
            if old.differs(from: item) || changed[item.id] != nil { changed[item.id] = item }
        } else {
            added[item.id] = item
        }
    }

    /// The initial gathering: puts the items of one folder in at once, as already delivered (the
    /// gathering events carry no changes). The folder must hold no results yet.
    mutating func addGathered(_ items: [MetadataItem], inFolder folder: String) {
        guard !items.isEmpty else { return }
        folders[ExactName(folder)] = FolderItems(gathered: items)
        count += items.count
        ordered.append(contentsOf: items)
    }

    /// Ends the initial gathering: sorts what it found, and gives the array back the room its
    /// growth left unused (up to half of it).
    mutating func finishGathering() {
        if !sortKeys.isEmpty { ordered = stableSorted(ordered) }
        if ordered.capacity > ordered.count + ordered.count / 8 {
            ordered = ordered.withUnsafeBufferPointer { Array($0) }
        }
    }

    /// Takes the item out without reporting it (the first half of a rename); `reportRemoval` it
    /// if the second half never comes.
    mutating func detach(folder: String, name: String) -> MetadataItem? {
        let key = ExactName(folder)
        guard let item = folders[key]?.removeValue(forKey: name) else { return nil }
        if folders[key]?.isEmpty == true { folders.removeValue(forKey: key) }
        count -= 1
        detached.insert(item.id)
        return item
    }

    /// Removes and reports the item `folder/name`, if it is a result.
    mutating func remove(folder: String, name: String) {
        if let item = detach(folder: folder, name: name) { reportRemoval(item) }
    }

    /// Reports a detached item as removed.
    mutating func reportRemoval(_ item: MetadataItem) {
        detached.remove(item.id)
        noteRemoved(item)
    }

    /// Detaches every item inside `folder` (not `folder`'s own item), by path relative to it.
    mutating func detachSubtree(of folder: String) -> [ExactName: MetadataItem] {
        var taken: [ExactName: MetadataItem] = [:]
        for key in folders.keys where PathBytes.haveSameBytes(key.string, folder) || CanonicalPathSupport.isInside(key.string, folder) {
            guard let items = folders.removeValue(forKey: key) else { continue }
            let path = key.string
            let relativeFolder = PathBytes.haveSameBytes(path, folder) ? "" : String(path.dropFirst(folder.count + 1)) + "/"
            for item in items.all {
                taken[ExactName(relativeFolder + item.name)] = item
                detached.insert(item.id)
            }
            count -= items.count
        }
        return taken
    }

    /// Every (folder, name) held, for a rescan's sweep.
    func allNames() -> [(folder: String, name: String)] {
        var names: [(folder: String, name: String)] = []
        names.reserveCapacity(count)
        for (folder, items) in folders { for name in items.names { names.append((folder.string, name)) } }
        return names
    }

    private mutating func noteRemoved(_ item: MetadataItem) {
        if added.removeValue(forKey: item.id) != nil { return }
        changed.removeValue(forKey: item.id)
        removed[item.id] = item
    }

    /// Brings `ordered` up to date and returns what changed since the last call. O(n) in the
    /// number of results, with one integer comparison per result and change when few changed.
    mutating func takeChanges() -> MetadataQueryUpdate {
        let update = MetadataQueryUpdate(added: sortedIfNeeded(Array(added.values)), changed: sortedIfNeeded(Array(changed.values)),
                                         removed: sortedIfNeeded(Array(removed.values)))
        if hasPendingChanges {
            let gone = IdentifierSet(removed.keys)
            if sortKeys.isEmpty {
                // Changed items keep their places; removed ones leave; added ones go last.
                if !changed.isEmpty {
                    let changedIDs = IdentifierSet(changed.keys)
                    for index in ordered.indices where changedIDs.contains(ordered[index].id) {
                        if let item = changed[ordered[index].id] { ordered[index] = item }
                    }
                }
                if !removed.isEmpty { ordered.removeAll { gone.contains($0.id) } }
                ordered.append(contentsOf: update.added)
            } else {
                // Changed items may move: out, then merged back in with the added ones.
                let moving = IdentifierSet(Array(removed.keys) + Array(changed.keys))
                ordered.removeAll { moving.contains($0.id) }
                ordered = merge(ordered, stableSorted(update.added + update.changed))
            }
        }
        added = [:]; changed = [:]; removed = [:]
        return update
    }

    private func sortedIfNeeded(_ items: [MetadataItem]) -> [MetadataItem] {
        let byID = items.sorted { $0.id < $1.id }
        return sortKeys.isEmpty ? byID : stableSorted(byID)
    }

    private func stableSorted(_ items: [MetadataItem]) -> [MetadataItem] {
        // Swift's sort is stable.
        items.sorted { MetadataQuerySortKey.precedes($0, $1, by: sortKeys) ?? false }
    }

    private func merge(_ left: [MetadataItem], _ right: [MetadataItem]) -> [MetadataItem] {
        var result: [MetadataItem] = []
        result.reserveCapacity(left.count + right.count)
        var i = 0, j = 0
        while i < left.count, j < right.count {
            if MetadataQuerySortKey.precedes(right[j], left[i], by: sortKeys) == true {
                result.append(right[j]); j += 1
            } else {
                result.append(left[i]); i += 1
            }
        }
        result.append(contentsOf: left[i...])
        result.append(contentsOf: right[j...])
        return result
    }
}

/// A set of item identifiers, tested once per result: a plain array scan when small (a few
/// integer comparisons, no hashing), a hash set otherwise.
private struct IdentifierSet {
    private let small: [UInt64]
    private let large: Set<UInt64>?

    init<S: Sequence<UInt64>>(_ identifiers: S) {
        let all = Array(identifiers)
        if all.count <= 16 { small = all; large = nil } else { small = []; large = Set(all) }
    }

    func contains(_ id: UInt64) -> Bool {
        if let large { return large.contains(id) }
        return small.contains(id)
    }
}
