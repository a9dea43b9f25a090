import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// What becomes current after an rclone bisync conflict, made real: rclone renames both sides
/// (`NAME..path1`, `NAME..path2`), so no file keeps the real name. When `NAME` is missing and its
/// folder holds rclone copies of it, the copy chosen by
/// ``SyncConflictNaming/copyBecomingCurrent(in:modificationDate:)`` (newest modification time,
/// then path1) is renamed to `NAME` inside a coordinated write — the copy `.forMoving`, `NAME`
/// written — and the other copies stay as unresolved conflict versions of `NAME`.
///
/// Used by `FileVersion`'s queries and, through the sync-tool policy (``SyncToolRules``), by
/// FileCoordination's change monitor (live, once the folder has settled).
package enum BisyncPromotion {
    /// Promotes the winning rclone bisync copy to the item at `itemURL` when the item is missing.
    /// `listing` is the folder's names if the caller has them (else it is read). Returns the copy
    /// that became the item, or nil when nothing was done (the item exists, no rclone copy, the
    /// coordinated write failed, or someone else restored the item first).
    ///
    /// Presenters: those of the item get `presentedItemDidChange()` from the coordinated write
    /// and `presentedItemDidLose(_:)` for the promoted copy (it is no longer a version); those of
    /// the copy (if any) `presentedItemDidMove(to:)`. Runs on the calling thread; never call it
    /// from inside a coordinated access of the item with another coordinator.
    @discardableResult
    package static func promoteIfNeeded(itemAt itemURL: URL, listing: [String]? = nil,
                                        coordinator: Coordinator) -> SyncConflictCopy? {
        let itemPath = PathBytes.path(of: itemURL)
        guard let parts = SyncFolderListing.split(itemPath), isMissing(itemPath) else { return nil }
        let (folder, name) = parts
        guard let names = listing ?? SyncFolderListing.candidateNames(inFolder: folder, forOriginal: name),
              let group = SyncConflictNaming.conflictGroup(of: name, in: names, options: .local),
              let winner = SyncConflictNaming.copyBecomingCurrent(in: group, modificationDate: {
                  SyncFolderListing.modificationDate(of: SyncFolderListing.join(folder, $0.name))
              })
        else { return nil }
        let copyURL = PathBytes.fileURL(SyncFolderListing.join(folder, winner.name))
        let promoted = try? coordinator.coordinate(writingItemAt: copyURL, options: .forMoving,
                                                   writingItemAt: itemURL, options: []) { source, target -> Bool in
            let sourcePath = PathBytes.path(of: source), targetPath = PathBytes.path(of: target)
            // Decided again with the locks held: someone may have restored the item meanwhile.
            guard isMissing(targetPath), !isMissing(sourcePath), renameWithoutReplacing(sourcePath, targetPath) else {
                return false
            }
            coordinator.item(at: source, didMoveTo: target)
            let reference = FileVersionReference(
                itemURL: target, url: source,
                persistentIdentifier: ConflictCopyIdentifier.identifier(forCopyNamed: winner.name), isConflict: true)
            coordinator.announceVersionChange(.lost(reference), ofItemAt: target)
            return true
        }
        return promoted == true ? winner : nil
    }

    /// Whether nothing is at `path` (not following a final link).
    private static func isMissing(_ path: String) -> Bool {
        var info = stat()
        return PathBytes.withCString(path) { lstat($0, &info) } != 0 && errno == ENOENT
    }

    /// `renameat2(RENAME_NOREPLACE)`, so an item that appeared meanwhile (written without
    /// coordinating) is never replaced; where the flag is unsupported, a plain `rename` (the
    /// check just before, under the coordinated write, makes that safe from coordinated writers).
    private static func renameWithoutReplacing(_ source: String, _ target: String) -> Bool {
        switch RenameAt2.rename(source, to: target, flag: .noReplace) {
        case .success: return true
        case .failure(let error) where RenameAt2.isUnsupported(error):
            return PathBytes.withCString(source) { from in PathBytes.withCString(target) { to in rename(from, to) } } == 0
        case .failure: return false
        }
    }
}
