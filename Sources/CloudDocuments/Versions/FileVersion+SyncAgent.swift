import FileCoordination
import Foundation
import SystemSupport

// The entry points the sync agent (`clouddocsd`, module SyncAgent) needs into the version store.
extension FileVersion {
    /// Adds the file at `contentsURL` as an **unresolved conflict version** of the item at `url`,
    /// inside a coordinated write of the item (or inside the caller's coordinated access of it,
    /// when called from one, reusing its lock). With `byMoving` the contents are renamed into the
    /// store when on its file system (copied otherwise) and are gone from `contentsURL`.
    /// `savingComputer` names the device whose edit the version holds (`nil`: this computer).
    ///
    /// Throws ``FileVersionError`` (`itemNotFound`, `contentsNotFound`, `unsupportedItem`,
    /// `coordinationFailed`, `storeFailed`); then no version was added and `contentsURL` is
    /// untouched. Runs on the calling thread; presenters of the item get
    /// `presentedItemDidGain(_:)` on their queues.
    package static func addSyncConflictVersion(ofItemAt url: URL, withContentsOf contentsURL: URL, byMoving: Bool,
                                               savingComputer: String?, coordinator: Coordinator?) throws(FileVersionError) -> FileVersion {
        try addVersion(ofItemAt: url, withContentsOf: contentsURL, byMoving: byMoving, isConflict: true,
                       savingComputer: savingComputer ?? hostName, coordinator: coordinator)
    }

    /// Copies the item's version-store identity (an extended attribute) from the file at `source`
    /// to the file at `destination`, before `destination` is renamed over `source`: the item's
    /// versions then follow it across the replacement. Does nothing when `source` has none or the
    /// file system refuses extended attributes. Any thread.
    package static func carryItemIdentity(from source: URL, to destination: URL) {
        guard let identity = ItemIdentityAttribute.read(PathBytes.path(of: source)) else { return }
        ItemIdentityAttribute.write(identity, to: PathBytes.path(of: destination))
    }
}

extension FileVersion {
    /// Whether the item at `url` may have versions in the store: it carries the store's identity
    /// attribute, or its path is in `recordedPaths` (``recordedItemPaths()``, read once by the
    /// caller: asking the store about every item one by one would read every item record each
    /// time). Any thread.
    package static func mayHaveStoredVersions(ofItemAt url: URL, recordedPaths: Set<String>) -> Bool {
        let path = PathBytes.path(of: url.standardizedFileURL)
        return ItemIdentityAttribute.read(path) != nil || recordedPaths.contains(path)
    }

    /// The paths the version store last recorded for its items (one read of each item record).
    /// Any thread.
    package static func recordedItemPaths() -> Set<String> {
        VersionStore.standard.recordedItemPaths()
    }
}

extension VersionStore {
    /// Every item's recorded path (one read of each `item.json`).
    func recordedItemPaths() -> Set<String> {
        guard let names = try? POSIX.directoryEntries(itemsFolder).names else { return [] }
        return Set(names.lazy.filter { UUID(uuidString: $0) != nil }.compactMap { self.readItemRecord($0)?.path })
    }
}
