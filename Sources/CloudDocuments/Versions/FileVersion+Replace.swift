import FileCoordination
import Foundation
import Glibc
import SystemSupport

extension FileVersion {
    /// Puts this version's contents at `url` (usually the item itself, to restore it), inside a
    /// coordinated write of `url`, and returns the URL where the contents now are (the
    /// coordinator's URL for `url`, which differs only if the item moved while waiting). The write
    /// is a plain one, not `.forReplacing`: that option means a deletion to presenters, and an
    /// open document would close; restoring is a change of contents, so an open document of the
    /// item stays open and reloads the restored contents (or keeps its unsaved changes).
    ///
    /// The contents are copied to a temporary item beside `url` (named like a save's, so a killed
    /// process's leftover is reclaimed by later saves), flushed and renamed over `url`: a reader
    /// sees the old contents or the new, never a mix. With `.byMoving` the version's contents are
    /// renamed into place instead (no copy) and the version is removed from the store. The
    /// restored item keeps its identity in the store, so its other versions stay attached.
    /// For the current version this copies the item (`.byMoving` is ignored). For a sync tool's
    /// conflict copy, `.byMoving` renames the copy over `url` (the copy is then gone, and the write
    /// also covers the copy, `.forMoving`); presenters of the item get `presentedItemDidLose(_:)`.
    ///
    /// Throws ``FileVersionError``: `versionNotFound` (the version's contents are gone),
    /// `coordinationFailed`, `storeFailed`. Then `url` is untouched.
    @discardableResult
    public func replaceItem(at url: URL, options: ReplacingOptions = [], coordinator: Coordinator? = nil)
        throws(FileVersionError) -> URL {
        let source = VersionContents.withoutTrailingSlashes(PathBytes.path(of: self.url))
        let byMoving = options.contains(.byMoving) && !isCurrent
        let isCopy = conflictCopyName != nil
        return try Self.coordinatedWrite(url, options: [],
                                         alsoWriting: isCopy && byMoving ? (self.url, .forMoving) : nil,
                                         coordinator: coordinator,
                                         announce: { _, itemURL in byMoving ? [.lost(reference(itemURL: itemURL))] : [] }) {
            (targetURL) throws(FileVersionError) -> URL in
            guard hasLocalContents else { throw .versionNotFound(self.url) }
            let paths: SavePaths
            do { paths = try SavePaths(for: targetURL) } catch {
                throw .storeFailed(path: PathBytes.path(of: targetURL), call: "resolve path", errno: .noSuchFileOrDirectory)
            }
            // The identity the restored item keeps: the one it had, or this version's item's when
            // the target is where that item was last seen (a save had dropped the attribute).
            let identity = ItemIdentityAttribute.read(paths.target)
                ?? itemID.flatMap { store.readItemRecord($0)?.path == paths.target ? $0 : nil }
            let existing = try? POSIX.linkStatus(paths.target)
            let isFolder = (try? POSIX.linkStatus(source))?.map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
            var moved = false
            if byMoving, !isFolder || existing == nil || existing.map({ $0.st_mode & S_IFMT != S_IFDIR }) == true {
                do throws(SystemCallError) {
                    try POSIX.rename(source, to: paths.target)
                    moved = true
                } catch {
                    // Another file system, or a file where a folder is: copy below.
                    guard [EXDEV, EISDIR, ENOTDIR].contains(error.code) else { throw FileVersionError(error) }
                }
            }
            if !moved {
                try Self.copyIntoPlace(source, paths: paths, isFolder: isFolder, existing: existing)
            }
            do throws(SystemCallError) { try POSIX.syncDirectory(paths.folder) } catch { throw FileVersionError(error) }
            if let identity { ItemIdentityAttribute.write(identity, to: paths.target) }
            if byMoving, let itemID {
                try? store.removeVersion(persistentIdentifier.rawValue, of: itemID)
            }
            if byMoving, isCopy, !moved { try? Self.removeCopy(at: self.url) }
            return targetURL
        }
    }

    /// Copies `source` to a locked temporary item beside `paths.target`, flushes it and renames
    /// it over the target (for folders: exchanges, then removes the old tree).
    private static func copyIntoPlace(_ source: String, paths: SavePaths, isFolder: Bool, existing: stat?) throws(FileVersionError) {
        let temporary = paths.temporary
        let lock: TemporaryItemLock
        do {
            if isFolder {
                lock = try StrayTemporaryFiles.createLockedFolder(temporary, mode: 0o755 & ~POSIX.currentUmask())
            } else {
                let created = try StrayTemporaryFiles.createLockedFile(
                    temporary, flags: O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, mode: 0o600)
                try created.0.close()
                lock = created.1
            }
        } catch { throw FileVersionError(error) }
        defer { lock.release() }
        do throws(FileVersionError) {
            if isFolder {
                let names: [String]
                do { names = try POSIX.directoryEntries(source).names } catch { throw FileVersionError(error) }
                for name in names { try VersionContents.copy(source + "/" + name, to: temporary + "/" + name) }
            } else {
                // Copy over the empty locked file (keeps the lock on its inode).
                try VersionContents.copyBytes(source, into: temporary)
                let mode = existing.map { $0.st_mode & 0o7777 } ?? (0o644 & ~POSIX.currentUmask())
                _ = PathBytes.withCString(temporary) { chmod($0, mode) }
            }
            try VersionContents.syncTree(temporary)
            do {
                if isFolder, let existing, existing.st_mode & S_IFMT == S_IFDIR {
                    try POSIX.rename(temporary, to: paths.target, flag: .exchange)
                    _ = POSIX.removeTree(temporary)  // The old tree, now under the temporary name.
                } else {
                    try POSIX.rename(temporary, to: paths.target)
                }
            } catch { throw FileVersionError(error) }
        } catch {
            _ = POSIX.removeTree(temporary)
            throw error
        }
    }
}
