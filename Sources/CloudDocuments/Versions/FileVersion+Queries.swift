import Foundation
import Glibc
import SystemSupport

extension FileVersion {
    /// The current version of the item at `url`: the item itself.
    /// Throws ``FileVersionError/itemNotFound(_:)`` when nothing is there.
    public static func currentVersionOfItem(at url: URL) throws(FileVersionError) -> FileVersion {
        let path = try VersionStore.canonicalItemPath(url)
        let info = try? POSIX.status(path)
        let date = info.map { Date(timeIntervalSince1970: TimeInterval($0.st_mtim.tv_sec) + TimeInterval($0.st_mtim.tv_nsec) / 1e9) }
        return FileVersion(currentOf: url, store: .standard, modificationDate: date)
    }

    /// Every version of the item at `url` except the current one (conflict versions included,
    /// resolved or not), oldest first. Empty when the store has none.
    public static func otherVersionsOfItem(at url: URL) throws(FileVersionError) -> [FileVersion] {
        let store = VersionStore.standard
        guard let item = try store.item(at: url, creating: false) else { return [] }
        return store.versions(of: item.id).map { FileVersion(record: $0, itemID: item.id, itemURL: url, store: store) }
    }

    /// The conflict versions of the item at `url` that are not resolved yet, oldest first.
    public static func unresolvedConflictVersionsOfItem(at url: URL) throws(FileVersionError) -> [FileVersion] {
        try otherVersionsOfItem(at: url).filter { $0.isConflict && !$0.isResolved }
    }

    /// The version of the item at `url` with `identifier` (from ``persistentIdentifier``, possibly
    /// saved by an earlier run), or `nil` when the item has no such version (any more).
    public static func version(itemAt url: URL, forPersistentIdentifier identifier: PersistentIdentifier)
        throws(FileVersionError) -> FileVersion? {
        if identifier == .current { return try currentVersionOfItem(at: url) }
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
