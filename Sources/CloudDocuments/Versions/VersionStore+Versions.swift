import Foundation
import Glibc
import SystemSupport

/// Listing, adding, changing and removing the versions of one item. Adding and removing are
/// crash-safe: a version appears by one rename of a complete, flushed folder and disappears by
/// one rename to a trash name, so after `kill -9` at any point the store holds the whole version
/// or none of it. Leftovers (temporary and trash folders) are removed by the next operation on
/// the item. Callers hold a coordinated write of the item around every change.
extension VersionStore {
    /// The item's versions, oldest first. Removes leftovers of killed operations on the way
    /// (only what is provably dead: see ``sweep(_:insideCoordinatedWrite:)``).
    func versions(of itemID: String) -> [VersionRecord] {
        sweep(itemID, insideCoordinatedWrite: false)
        guard let names = try? POSIX.directoryEntries(itemFolder(itemID)).names else { return [] }
        var records: [VersionRecord] = []
        for name in names where name.hasSuffix(Self.versionSuffix) {
            let versionID = String(name.dropLast(Self.versionSuffix.count))
            if let record = readVersionRecord(itemID, versionID) { records.append(record) }
        }
        return records.sorted { ($0.addedDate, $0.id) < ($1.addedDate, $1.id) }
    }

    func readVersionRecord(_ itemID: String, _ versionID: String) -> VersionRecord? {
        guard UUID(uuidString: versionID) != nil,
              let data = FileManager.default.contents(atPath: versionFolder(itemID, versionID) + "/version.json"),
              let record = try? JSONDecoder().decode(VersionRecord.self, from: data),
              record.id == versionID else { return nil }
        return record
    }

    /// Replaces a version's metadata (atomically and durably).
    func writeVersionRecord(_ record: VersionRecord, itemID: String) throws(FileVersionError) {
        let data: Data
        do { data = try JSONEncoder().encode(record) } catch {
            throw .storeFailed(path: versionFolder(itemID, record.id), call: "encode", errno: .invalidArgument)
        }
        guard readVersionRecord(itemID, record.id) != nil else {
            throw .versionNotFound(URL(fileURLWithPath: versionFolder(itemID, record.id)))
        }
        try Self.writeDurably(data, to: versionFolder(itemID, record.id) + "/version.json",
                              temporaryIn: itemFolder(itemID))
    }

    /// Adds the file or folder at `source` as a new version of `item`, named `itemName`.
    ///
    /// The version is built in a temporary folder `.tmp-<uuid>` that this thread locks (`flock`)
    /// for as long as it exists: contents (copied, or renamed when `byMoving` and on the same
    /// file system), `version.json`, every file and folder `fsync`ed (the last three together);
    /// then one rename makes it
    /// `<id>.version` and the item folder is `fsync`ed. With `byMoving` across file systems the
    /// source is removed only after that.
    func addVersion(of item: Item, contentsAt source: String, sourceURL: URL, itemName: String, byMoving: Bool,
                    isConflict: Bool, isDiscardable: Bool = false, savingComputer: String?) throws(FileVersionError) -> VersionRecord {
        sweep(item.id, insideCoordinatedWrite: true)
        let sourceInfo: stat?
        do { sourceInfo = try POSIX.linkStatus(source) } catch { throw FileVersionError(error) }
        guard let sourceInfo else { throw .contentsNotFound(sourceURL) }
        let kind = sourceInfo.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFDIR else { throw .unsupportedItem(sourceURL) }

        let versionID = UUID().uuidString
        let temporary = itemFolder(item.id) + "/" + Self.temporaryPrefix + UUID().uuidString
        let lock: TemporaryItemLock
        do { lock = try StrayTemporaryFiles.createLockedFolder(temporary, mode: 0o700) } catch {
            throw FileVersionError(error)
        }
        defer { lock.release() }
        var movedSource = false
        do throws(FileVersionError) {
            let dataFolder = temporary + "/data"
            do { try POSIX.makeDirectory(dataFolder, mode: 0o700) } catch { throw FileVersionError(error) }
            let contents = dataFolder + "/" + itemName
            if byMoving {
                do throws(SystemCallError) {
                    try POSIX.rename(source, to: contents)
                    movedSource = true
                } catch {
                    guard error.code == EXDEV else { throw FileVersionError(error) }
                    try VersionContents.copy(source, to: contents)
                }
            } else {
                try VersionContents.copy(source, to: contents)
            }
            VersionStoreTesting.pause(.contentsWritten)
            // A file's contents are flushed with the metadata below; a folder's tree first.
            if kind != S_IFREG { try VersionContents.syncTree(contents) }
            let record = VersionRecord(
                id: versionID, itemName: itemName,
                modificationDate: Date(timeIntervalSince1970: TimeInterval(sourceInfo.st_mtim.tv_sec)
                    + TimeInterval(sourceInfo.st_mtim.tv_nsec) / 1e9),
                addedDate: Date(), savingComputer: savingComputer, isConflict: isConflict,
                isResolved: !isConflict, isDiscardable: isDiscardable, size: VersionContents.size(of: contents))
            let data: Data
            do { data = try JSONEncoder().encode(record) } catch {
                throw .storeFailed(path: temporary, call: "encode", errno: .invalidArgument)
            }
            try VersionContents.writeNewFile(data, at: temporary + "/version.json", flushing: false)
            // The metadata and both folders' entries, flushed together (one journal commit).
            try VersionContents.syncTogether((kind == S_IFREG ? [contents] : []) + [temporary + "/version.json", dataFolder, temporary])
            VersionStoreTesting.pause(.beforeRename)
            do {
                try POSIX.rename(temporary, to: versionFolder(item.id, versionID))
                VersionStoreTesting.pause(.afterRename)
                try POSIX.syncDirectory(itemFolder(item.id))
            } catch { throw FileVersionError(error) }
            if byMoving, !movedSource { _ = POSIX.removeTree(source) }
            return record
        } catch {
            // Put moved contents back where they came from, then drop the temporary folder.
            if movedSource { try? POSIX.rename(temporary + "/data/" + itemName, to: source) }
            _ = POSIX.removeTree(temporary)
            throw error
        }
    }

    /// Removes one version: a rename to `.trash-<uuid>` (the version is gone at that instant,
    /// for every reader), an `fsync` of the item folder, then the trash is deleted. A crash
    /// before the deletion leaves a trash folder that the next operation on the item removes.
    func removeVersion(_ versionID: String, of itemID: String) throws(FileVersionError) {
        let folder = versionFolder(itemID, versionID)
        let trash = itemFolder(itemID) + "/" + Self.trashPrefix + UUID().uuidString
        do {
            try POSIX.rename(folder, to: trash)
        } catch {
            if error.code == ENOENT { throw .versionNotFound(URL(fileURLWithPath: folder)) }
            throw FileVersionError(error)
        }
        try? POSIX.syncDirectory(itemFolder(itemID))
        VersionStoreTesting.pause(.movedToTrash)
        _ = POSIX.removeTree(trash)
    }

    /// Removes the leftovers of killed operations in the item's folder: every trash folder; every
    /// temporary version folder whose writer is gone (its `flock` can be taken, as in
    /// ``StrayTemporaryFiles``); and, only `insideCoordinatedWrite` (no other writer of this item
    /// can be running), leftover temporary metadata files. Best effort; never throws.
    func sweep(_ itemID: String, insideCoordinatedWrite: Bool) {
        let folder = itemFolder(itemID)
        guard let names = try? POSIX.directoryEntries(folder).names else { return }
        for name in names {
            let path = folder + "/" + name
            if name.hasPrefix(Self.trashPrefix) {
                _ = POSIX.removeTree(path)
            } else if name.hasPrefix(Self.temporaryPrefix) {
                Self.removeIfWriterGone(path)
            } else if insideCoordinatedWrite, name.hasPrefix(Self.jsonTemporaryPrefix) {
                POSIX.removeFileQuietly(path)
            }
        }
    }

    /// Removes the temporary version folder at `path` if its writer's `flock` is gone.
    private static func removeIfWriterGone(_ path: String) {
        let fd = PathBytes.withCString(path) { open($0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return }
        defer { _ = close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return }
        // Locked: its writer is gone. Remove it if the name still leads to what we locked.
        var opened = stat()
        guard fstat(fd, &opened) == 0, let named = VersionContents.inode(of: path, followingLinks: false),
              named == VersionContents.Inode(opened) else { return }
        _ = POSIX.removeTree(path)
    }
}
