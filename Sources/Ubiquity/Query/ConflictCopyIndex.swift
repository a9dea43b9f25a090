import Foundation
import CloudDocuments
import FileCoordination
import SystemSupport

/// The names in each folder of a query's scopes that may be sync tools' conflict copies, by the
/// original each may belong to (``SyncConflictNaming/possibleOriginals(ofCopyNamed:)``): set from
/// the walk's listing of a folder, then kept up to date from the kernel's reports (a name created
/// or moved in, deleted or moved away). With it, whether an item has conflict copies costs a
/// dictionary lookup and a few `statx` calls — never a read of the folder, which made each
/// created item cost a whole folder listing (a burst of 100,000 creates froze a query for minutes).
///
/// Folders without such names hold nothing here. Owned by the query's thread; unsynchronized.
struct ConflictCopyIndex {
    /// folder → original → the names that may be its copies (all by exact bytes).
    private var folders: [ExactName: [ExactName: Set<ExactName>]] = [:]

    /// Notes that `folder` holds `name` (nothing unless it may be a conflict copy).
    mutating func insert(_ name: String, in folder: String) {
        guard ResultNameFilter.mayBeConflictCopy(name.utf8) else { return }
        let originals = SyncConflictNaming.possibleOriginals(ofCopyNamed: name)
        guard !originals.isEmpty else { return }
        let copy = ExactName(name)
        for original in originals {
            folders[ExactName(folder), default: [:]][ExactName(original), default: []].insert(copy)
        }
    }

    /// Notes that `folder` no longer holds `name`.
    mutating func remove(_ name: String, in folder: String) {
        guard ResultNameFilter.mayBeConflictCopy(name.utf8) else { return }
        let key = ExactName(folder)
        guard var byOriginal = folders[key] else { return }
        let copy = ExactName(name)
        for original in SyncConflictNaming.possibleOriginals(ofCopyNamed: name) {
            let originalKey = ExactName(original)
            guard var copies = byOriginal[originalKey] else { continue }
            copies.remove(copy)
            byOriginal[originalKey] = copies.isEmpty ? nil : copies
        }
        folders[key] = byOriginal.isEmpty ? nil : byOriginal
    }

    /// After reading `folder`: it holds exactly `names` of the kind kept here (the names the walk
    /// found that ``ResultNameFilter/mayBeConflictCopy(_:)`` lets through).
    mutating func replace(folder: String, with names: [String]) {
        folders[ExactName(folder)] = nil
        for name in names { insert(name, in: folder) }
    }

    /// The names in `folder` that may be conflict copies of `original`.
    func copies(of original: String, in folder: String) -> [String] {
        folders[ExactName(folder)]?[ExactName(original)].map { $0.map(\.string) } ?? []
    }

    /// Forgets `folder` and every folder inside it (deleted or moved away).
    mutating func removeSubtree(_ folder: String) {
        guard !folders.isEmpty else { return }
        for key in folders.keys where PathBytes.haveSameBytes(key.string, folder) || CanonicalPathSupport.isInside(key.string, folder) {
            folders[key] = nil
        }
    }

    /// Forgets the folders not in `kept` (after a rescan).
    mutating func removeAll(except kept: Set<ExactName>) {
        for key in folders.keys where !kept.contains(key) { folders[key] = nil }
    }
}
