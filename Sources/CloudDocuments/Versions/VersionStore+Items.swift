import Foundation
import Glibc
import SystemSupport

/// Finding an item's folder in the store: by the identity attribute on the item (which follows
/// moves), else by the item's last known path (which survives saves that replace the file).
extension VersionStore {
    /// An item as the store knows it.
    struct Item: Sendable, Equatable {
        /// Its identity (the name of its folder under `items/`).
        var id: String
        /// Its canonical path now (symbolic links resolved).
        var path: String
        /// Its name: the last component of ``path`` (a lossless path string).
        var name: String { path.split(separator: "/").last.map(String.init) ?? "item" }
    }

    /// The canonical path of the item at `url`, checking that it exists and is a file or folder.
    static func canonicalItemPath(_ url: URL) throws(FileVersionError) -> String {
        let raw = PathBytes.path(of: url)
        guard let path = POSIX.resolvedPath(raw) else { throw .itemNotFound(url) }
        let info: stat?
        do { info = try POSIX.status(path) } catch { throw FileVersionError(error) }
        guard let info else { throw .itemNotFound(url) }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFDIR else { throw .unsupportedItem(url) }
        return path
    }

    /// The store's item for the item at `url`.
    ///
    /// - With `creating == false` (queries) `nil` means the store has no versions of the item.
    ///   The only write is the new path of an item found moved (atomic; best effort).
    /// - With `creating == true` (only inside a coordinated write of the item) the item gets a
    ///   folder and an identity attribute if it has none, and its recorded path is brought up to
    ///   date after a move. Never `nil`.
    ///
    /// A copy of an item (`cp -a`, which copies the attribute too) is told from the item moved:
    /// when the recorded path still holds a different file carrying the same identity, the one at
    /// `url` is a copy and gets an identity of its own (when creating) or none (in queries).
    func item(at url: URL, creating: Bool) throws(FileVersionError) -> Item? {
        let path = try Self.canonicalItemPath(url)
        if let id = ItemIdentityAttribute.read(path) {
            if let record = readItemRecord(id) {
                if record.path == path { return Item(id: id, path: path) }
                if !isCopy(at: path, of: record.path, id: id) {
                    // Moved. Queries record the new path too (best effort, atomic), so that a new
                    // file at the old path is not taken for this item.
                    if creating {
                        try writeItemRecord(ItemRecord(id: id, path: path))
                    } else {
                        try? writeItemRecord(ItemRecord(id: id, path: path))
                    }
                    return Item(id: id, path: path)
                }
                // A copy: fall through to the path, then to a new identity.
            } else if creating, !pathIsRecorded(path) {
                // Known identity, unknown to this store (a store that was emptied): adopt it.
                try makeFolders(itemFolder(id))
                try writeItemRecord(ItemRecord(id: id, path: path))
                return Item(id: id, path: path)
            }
        }
        if let id = itemID(recordedAt: path) {
            if creating { ItemIdentityAttribute.write(id, to: path) }
            return Item(id: id, path: path)
        }
        guard creating else { return nil }
        let id = UUID().uuidString
        try makeFolders(itemFolder(id))
        try writeItemRecord(ItemRecord(id: id, path: path))
        ItemIdentityAttribute.write(id, to: path)
        return Item(id: id, path: path)
    }

    /// Whether `path` is a copy of the item recorded at `recordedPath` with identity `id`.
    private func isCopy(at path: String, of recordedPath: String, id: String) -> Bool {
        guard ItemIdentityAttribute.read(recordedPath) == id,
              let original = VersionContents.inode(of: recordedPath, followingLinks: true),
              let this = VersionContents.inode(of: path, followingLinks: true) else { return false }
        return original != this
    }

    private func pathIsRecorded(_ path: String) -> Bool { itemID(recordedAt: path) != nil }

    /// The item whose recorded path is `path`: the candidates the path index lists, each checked
    /// against its `item.json` (VersionStore+PathIndex). A store whose index is not complete yet is
    /// read whole (one read of each `item.json`), once: that read completes the index.
    func itemID(recordedAt path: String) -> String? {
        if let candidates = indexedItems(at: path) {
            return candidates.first { readItemRecord($0)?.path == path }
        }
        guard let names = try? POSIX.directoryEntries(itemsFolder).names else { return nil }
        var records: [(id: String, path: String)] = []
        for name in names where UUID(uuidString: name) != nil {
            if let record = readItemRecord(name) { records.append((name, record.path)) }
        }
        completePathIndex(records)
        return records.first { $0.path == path }?.id
    }

    func readItemRecord(_ id: String) -> ItemRecord? {
        guard let data = FileManager.default.contents(atPath: itemRecordPath(id)) else { return nil }
        return try? JSONDecoder().decode(ItemRecord.self, from: data)
    }

    /// Writes `record` (atomically and durably), after listing its path in the path index.
    func writeItemRecord(_ record: ItemRecord) throws(FileVersionError) {
        try indexPath(record.path, forItem: record.id)
        let data: Data
        do { data = try JSONEncoder().encode(record) } catch {
            throw .storeFailed(path: itemRecordPath(record.id), call: "encode", errno: .invalidArgument)
        }
        try Self.writeDurably(data, to: itemRecordPath(record.id), temporaryIn: itemFolder(record.id))
    }

    static let jsonTemporaryPrefix = ".json-"

    /// Writes `data` to `path` atomically and durably: a temporary file in `folder` (on the same
    /// file system), `fsync`, rename over `path`, `fsync` of `path`'s folder. A reader sees the old
    /// file or the new one. A temporary file left by a crash is removed by the next change of the
    /// item (``VersionStore/sweep(_:insideCoordinatedWrite:)``).
    static func writeDurably(_ data: Data, to path: String, temporaryIn folder: String) throws(FileVersionError) {
        let temporary = folder + "/" + jsonTemporaryPrefix + UUID().uuidString
        do throws(SystemCallError) {
            let file = try POSIX.open(temporary, O_CREAT | O_EXCL | O_WRONLY, mode: 0o600)
            do throws(SystemCallError) {
                try VersionContents.writeAll(data, to: file)
                try file.sync()
            } catch {
                _ = Glibc.close(file.rawValue)
                throw error
            }
            try file.close()
            try POSIX.rename(temporary, to: path)
            try POSIX.syncDirectory(parentPath(of: path))
        } catch {
            POSIX.removeFileQuietly(temporary)
            throw FileVersionError(error)
        }
    }
}

/// The folder part of an absolute path (`"/"` for a path directly under the root).
func parentPath(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
