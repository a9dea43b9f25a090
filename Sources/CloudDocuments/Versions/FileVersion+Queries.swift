import FileCoordination
import Foundation
import Glibc
import SystemSupport

extension FileVersion {
    /// The current version of the item at `url`: the item itself.
    /// Throws ``FileVersionError/itemNotFound(_:)`` when nothing is there.
    ///
    /// When nothing is there but the folder holds rclone bisync conflict copies of the item
    /// (`NAME..path1`, `NAME..path2`: rclone renames both sides), the winning copy is first renamed
    /// to the item's name inside a coordinated write, and becomes the current version (see
    /// Docs/Versions.md, "What becomes current after an rclone bisync conflict").
    public static func currentVersionOfItem(at url: URL) throws(FileVersionError) -> FileVersion {
        BisyncPromotion.promoteIfNeeded(itemAt: url, coordinator: Coordinator.joiningCurrentAccess(to: url) ?? Coordinator())
        let path = try VersionStore.canonicalItemPath(url)
        let info = try? POSIX.status(path)
        let date = info.map { Date(timeIntervalSince1970: TimeInterval($0.st_mtim.tv_sec) + TimeInterval($0.st_mtim.tv_nsec) / 1e9) }
        return FileVersion(currentOf: url, store: .standard, modificationDate: date)
    }

    /// Every version of the item at `url` except the current one (conflict versions included,
    /// resolved or not), oldest first: the versions kept in the store, and the conflict copies
    /// that sync tools left beside the item (one `readdir` of its folder). Empty when there are
    /// none.
    ///
    /// "Oldest first" orders by when each version came to be: a stored version when it was added,
    /// a conflict copy when it was made in the folder (its change time). When the item is missing
    /// and rclone bisync copies of it are there, the winner first becomes the item (see
    /// ``currentVersionOfItem(at:)``). Throws ``FileVersionError/itemNotFound(_:)`` when the item
    /// is missing and has no conflict copies.
    public static func otherVersionsOfItem(at url: URL) throws(FileVersionError) -> [FileVersion] {
        try otherVersions(ofItemAt: url, promoting: true)
    }

    /// The conflict versions of the item at `url` that are not resolved yet, oldest first (stored
    /// conflict versions and sync tools' conflict copies; see ``otherVersionsOfItem(at:)``).
    public static func unresolvedConflictVersionsOfItem(at url: URL) throws(FileVersionError) -> [FileVersion] {
        try unresolvedConflictVersions(ofItemAt: url, promoting: true)
    }

    /// ``unresolvedConflictVersionsOfItem(at:)``; `promoting: false` never renames an rclone
    /// bisync copy (the live checks of documents leave that to the change monitor, which waits
    /// until rclone is done).
    static func unresolvedConflictVersions(ofItemAt url: URL, promoting: Bool) throws(FileVersionError) -> [FileVersion] {
        try otherVersions(ofItemAt: url, promoting: promoting).filter { $0.isConflict && !$0.isResolved }
    }

    /// ``otherVersionsOfItem(at:)``, promoting an rclone bisync winner or not.
    static func otherVersions(ofItemAt url: URL, promoting: Bool) throws(FileVersionError) -> [FileVersion] {
        let copies = conflictCopies(ofItemAt: url, promoting: promoting)
        let stored: [Dated]
        do {
            stored = try storedVersions(ofItemAt: url)
        } catch {
            guard case .itemNotFound = error, !copies.isEmpty else { throw error }
            stored = []
        }
        if copies.isEmpty { return stored.map(\.version) }
        return (stored + copies).sorted(by: oldestFirst).map(\.version)
    }

    /// The versions of the item at `url` kept in the store, in the store's order (when added).
    private static func storedVersions(ofItemAt url: URL) throws(FileVersionError) -> [Dated] {
        let store = VersionStore.standard
        guard let item = try store.item(at: url, creating: false) else { return [] }
        return store.versions(of: item.id).map {
            Dated(version: FileVersion(record: $0, itemID: item.id, itemURL: url, store: store), date: $0.addedDate, isCopy: false)
        }
    }

    /// The version of the item at `url` with `identifier` (from ``persistentIdentifier``, possibly
    /// saved by an earlier run), or `nil` when the item has no such version (any more).
    public static func version(itemAt url: URL, forPersistentIdentifier identifier: PersistentIdentifier)
        throws(FileVersionError) -> FileVersion? {
        if identifier == .current { return try currentVersionOfItem(at: url) }
        if let copyName = ConflictCopyIdentifier.copyName(in: identifier.rawValue) {
            return conflictCopy(ofItemAt: url, named: copyName)
        }
        guard identifier.isStoredVersionName else { return nil }
        let store = VersionStore.standard
        guard let item = try store.item(at: url, creating: false),
              let record = store.readVersionRecord(item.id, identifier.rawValue) else { return nil }
        return FileVersion(record: record, itemID: item.id, itemURL: url, store: store)
    }

    /// A new, empty folder on the version store's file system where you can write the contents of
    /// a new version of the item at `url`, then add it with
    /// ``addOfItem(at:withContentsOf:options:)`` and `.byMoving` (a rename, no copy). Remove the
    /// folder when you are done; folders older than a day are removed by later calls.
    public static func temporaryDirectoryURLForNewVersionOfItem(at url: URL) throws(FileVersionError) -> URL {
        let store = VersionStore.standard
        _ = try VersionStore.canonicalItemPath(url)
        try store.makeFolders(store.temporaryFolder)
        store.removeOldTemporaryFolders()
        let path = store.temporaryFolder + "/" + UUID().uuidString
        do { try POSIX.makeDirectory(path, mode: 0o700) } catch { throw FileVersionError(error) }
        return PathBytes.fileURL(path, isDirectory: true)
    }
}

extension VersionStore {
    /// How long folders made by `temporaryDirectoryURLForNewVersionOfItem(at:)` may stay.
    static let temporaryFolderLifetime: TimeInterval = 24 * 60 * 60

    /// Removes the store's temporary folders older than ``temporaryFolderLifetime``.
    func removeOldTemporaryFolders() {
        guard let names = try? POSIX.directoryEntries(temporaryFolder).names else { return }
        let limit = Date().timeIntervalSince1970 - Self.temporaryFolderLifetime
        for name in names {
            let path = temporaryFolder + "/" + name
            if let info = try? POSIX.linkStatus(path), TimeInterval(info.st_mtim.tv_sec) < limit {
                _ = POSIX.removeTree(path)
            }
        }
    }
}
