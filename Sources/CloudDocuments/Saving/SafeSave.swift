import Foundation
import Glibc

/// Durable, atomic saving of a file: the original is either left exactly as it was or replaced
/// whole by the new contents, never half-written, and once a save returns the new contents
/// survive a crash or power loss.
///
/// The steps: create a temporary file in the same folder with `O_CREAT|O_EXCL`, writable by its
/// owner only (`0644 & ~umask` for a new file; the original's permission bits when they let only
/// the owner write, else `0600`); write every byte, checking each write; give it the original's
/// permission bits (and owner, when the process may: as root, or the group when it is one of
/// ours) where it does not have them yet; `fsync` it; rename it over the target
/// (`renameat2(RENAME_NOREPLACE)` when creating, so an existing file is never replaced even by a
/// race); `fsync` the folder (a document's save makes that last `fsync` after releasing its
/// write lock, before it returns: `DeferredFolderFlush`). On ext2/3/4 the file replaced (up to
/// 16 MiB) is held by a path-only descriptor across the rename and freed after the folder's
/// `fsync`, off the save's path (`ReplacedFileRelease`): the rename no longer waits for its blocks
/// to be given back. On any failure before the rename, the temporary file is removed,
/// the original is untouched, and a ``DocumentError`` says why. The temporary item stays locked
/// while it is written, and a save first removes the temporary items of earlier saves of the
/// same target whose writer died (`kill -9`, a crash), never those of a live one (in a folder of
/// more than 128 entries, at most once per 10 seconds; in a smaller one, not again within a
/// second while the folder is unchanged since this process's own last save there; see
/// `StrayTemporaryFiles`).
///
/// Limits (as with Apple's safe save and `Data.write(options: .atomic)`): the new file is a new
/// inode, so hard links to the original keep the old contents, and extended attributes / ACLs are
/// not carried over. A symbolic link at the target is followed: the file it points to is
/// replaced and the link kept (a dangling link is itself replaced by the file). The caller is
/// expected to hold the item's coordinated write lock; nothing here checks for concurrent writers
/// (no modification-date or inode check just before the rename).
///
/// Threading: every function is synchronous and blocking (it waits for the disk) and may be
/// called on any thread, but not on a thread that must stay responsive. Concurrent saves to
/// different targets are independent; concurrent saves to the same target each succeed or fail
/// whole, and the last rename wins.
public enum SafeSave {
    /// The size of each `write(2)` call, and so the granularity of progress reports: 1 MiB.
    public static let chunkSize = 1 << 20

    /// Saves `data` to the file at `url`, atomically and durably.
    ///
    /// - Parameters:
    ///   - data: The complete new contents.
    ///   - url: A file URL. Its folder must exist.
    ///   - creating: `true` for ``SaveOperation/forCreating``: the save fails if anything exists at
    ///     `url`. `false` replaces the file, or creates it if it does not exist.
    ///   - progress: Called on the calling thread after each chunk with the number of bytes written
    ///     so far (at most ``chunkSize`` apart; not called for empty data).
    /// - Throws: ``DocumentError/alreadyExists(_:)`` (creating, and something is at `url`),
    ///   ``DocumentError/diskFull(_:errno:)``, ``DocumentError/folderMissing(_:)``,
    ///   ``DocumentError/notWritable(_:errno:)``, or ``DocumentError/saveFailed(_:reason:errno:)``. In all
    ///   these cases the original is untouched and no temporary file is left, except for the
    ///   `saveFailed` whose reason says the new contents are in place but the folder could not be
    ///   flushed (the rename happened; a power loss could still bring the old file back) or the
    ///   file could not be closed after its contents were flushed.
    public static func write(_ data: Data, to url: URL, creating: Bool, progress: ((Int64) -> Void)? = nil) throws(DocumentError) {
        ReplacedFileRelease.closePending()
        let paths = try SavePaths(for: url)
        // One descriptor of the folder serves the look for strays and the final `fsync`. When
        // the folder cannot be opened, the save goes on: it fails where it did before (creating
        // the temporary file in a missing folder, or flushing a folder it may not read).
        var folder = StrayTemporaryFiles.openFolder(paths.folder)
        defer { if folder >= 0 { _ = Glibc.close(folder) } }
        if folder >= 0 { StrayTemporaryFiles.reclaimIfDue(besideTarget: paths.target, inFolder: folder) }
        let existing: stat?
        do { existing = try paths.targetStatus() } catch {
            throw .forSave(error, target: url, folder: paths.folder)
        }
        if let existing {
            if creating { throw .alreadyExists(url) }
            if existing.st_mode & S_IFMT == S_IFDIR {
                throw .saveFailed(url, reason: "a folder is in the way at “\(paths.target)”", errno: .isDirectory)
            }
        }

        // The temporary file's lock lasts while `file` is open: it is closed after the rename.
        let file: FileDescriptor
        let created: stat
        do throws(SystemCallError) {
            try checkInjectedFailure(.createTemporary, key: paths.injectionKey, path: paths.temporary)
            (file, created) = try StrayTemporaryFiles.createFileLockedWhileOpen(
                paths.temporaryPath, flags: O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, mode: creationMode(like: existing))
        } catch {
            throw .forSave(error, target: url, folder: paths.folder)
        }

        // The file replaced is freed after the save, not inside the rename (ReplacedFileRelease).
        var replaced: Int32 = -1
        do throws(SystemCallError) {
            try writeChunks(of: data, to: file, injectionKey: paths.injectionKey) { progress?(Int64($0)) }
            try checkInjectedFailure(.setPermissions, key: paths.injectionKey, path: paths.temporary)
            if needsAttributes(created, toReplace: existing) {
                try carryOverAttributes(of: existing, to: file, defaultMode: 0o644)
            }
            try checkInjectedFailure(.fsync, key: paths.injectionKey, path: paths.temporary)
            try file.sync()
            try checkInjectedFailure(.rename, key: paths.injectionKey, path: paths.target)
            if !creating, let existing { replaced = ReplacedFileRelease.hold(paths.targetPath, found: existing, folder: folder) }
            try moveFileIntoPlace(paths.temporaryPath, to: paths.targetPath, creating: creating)
        } catch {
            ReplacedFileRelease.closeNow(replaced)
            POSIX.removeFileQuietly(paths.temporaryPath)  // still locked: no reclaimer touches it meanwhile
            _ = Glibc.close(file.rawValue)
            if creating && error.code == EEXIST { throw .alreadyExists(url) }
            throw .forSave(error, target: url, folder: paths.folder)
        }

        // The contents were flushed by `fsync` above; closing releases the lock. A failure to
        // close is reported after the folder is flushed.
        var closeFailure: SystemCallError?
        do throws(SystemCallError) { try file.close() } catch { closeFailure = error }
        if folder >= 0 { StrayTemporaryFiles.noteOwnChange(inFolder: paths.folder, descriptor: folder) }
        do throws(SystemCallError) {
            try checkInjectedFailure(.directoryFsync, key: paths.injectionKey, path: paths.folder)
            if folder >= 0, let deferral = DeferredFolderFlush.current {
                // A document's save flushes the folder after its write lock (DeferredFolderFlush),
                // and releases the replaced file after that.
                deferral.adopt(folder, path: paths.folder, replaced: replaced)
                folder = -1
                replaced = -1
            } else if folder >= 0 {
                try FileDescriptor(rawValue: folder, path: paths.folder).sync()
            } else {
                try POSIX.syncDirectory(paths.folderPath)
            }
        } catch {
            ReplacedFileRelease.release(replaced, on: nil)
            throw .saveFailed(url, reason: "the new contents are in place, but the folder could not be flushed to disk (\(error.call))", errno: error.errno)
        }
        ReplacedFileRelease.release(replaced, on: nil)
        if let closeFailure {
            throw .saveFailed(url, reason: "the new contents are in place, but closing the file failed (\(closeFailure.call))", errno: closeFailure.errno)
        }
    }

    /// Returns once the files replaced by the saves that have returned are freed (they are freed
    /// after a save, off its path: see `ReplacedFileRelease`). For benchmarks, so that the next
    /// measured save does not share the disk with the freeing. Any thread; blocks.
    package static func waitForReplacedFilesToBeFreed() {
        ReplacedFileRelease.closePending()
    }

    /// Writes `data` to `file` in chunks of ``chunkSize``, checking for an injected `.write` failure
    /// before each chunk and calling `afterChunk` with the running total.
    static func writeChunks(of data: Data, to file: FileDescriptor, injectionKey: String,
                            afterChunk: (Int) -> Void) throws(SystemCallError) {
        var failure: SystemCallError?
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunkSize, bytes.count)
                do throws(SystemCallError) {
                    try checkInjectedFailure(.write, key: injectionKey, path: file.path)
                    try file.writeAll(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                } catch {
                    failure = error
                    return
                }
                offset = end
                afterChunk(offset)
            }
        }
        if let failure { throw failure }
    }

    /// The mode to create a temporary file with (the umask applies): `0644` for a new file;
    /// for a replacement the original's permission bits when they let nobody but the owner write
    /// and have no set-user-ID, set-group-ID or sticky bit, otherwise owner-only (`0600`) until
    /// ``carryOverAttributes(of:to:defaultMode:)`` sets them. So nobody who could not write the
    /// original can write the file being written, and in the usual case no `chmod` is needed.
    static func creationMode(like original: stat?) -> mode_t {
        guard let original else { return 0o644 }
        let mode = original.st_mode & 0o7777
        return mode & 0o7022 == 0 ? mode : 0o600
    }

    /// Whether a temporary file created with ``creationMode(like:)`` (its status `created`) still
    /// needs ``carryOverAttributes(of:to:defaultMode:)``: when it replaces `original` and differs
    /// from it in owner, group or permission bits. A new file keeps what it was created with
    /// (`0644` less the umask, as `open` gives every new file).
    static func needsAttributes(_ created: stat, toReplace original: stat?) -> Bool {
        guard let original else { return false }
        return created.st_mode & 0o7777 != original.st_mode & 0o7777
            || created.st_uid != original.st_uid || created.st_gid != original.st_gid
    }

    /// Gives `file` the owner and permission bits of `original`, or `defaultMode & ~umask` when
    /// there is no original. A change of owner is tried only when it differs from ours and its
    /// failure is not an error (only root may give files away); permission bits must succeed.
    static func carryOverAttributes(of original: stat?, to file: FileDescriptor, defaultMode: mode_t) throws(SystemCallError) {
        guard let original else {
            try file.setPermissions(defaultMode & ~POSIX.currentUmask())
            return
        }
        if original.st_uid != geteuid() || original.st_gid != getegid() {
            do {
                try file.setOwner(user: original.st_uid, group: original.st_gid)
            } catch {
                // Not root: keep our user, but the group may still be one of ours.
                try? file.setOwner(user: uid_t.max, group: original.st_gid)
            }
        }
        // After the owner: chown clears the set-user-ID and set-group-ID bits.
        try file.setPermissions(original.st_mode & 0o7777)
    }

    /// The final step for a regular file. Creating: `renameat2(RENAME_NOREPLACE)`, or where the
    /// file system lacks it, ``createByLinking(_:to:)``. Replacing: `rename`. Throws errno EEXIST
    /// when creating and the target exists.
    static func moveFileIntoPlace(_ temporary: SystemPath, to target: SystemPath, creating: Bool) throws(SystemCallError) {
        guard creating else {
            try POSIX.rename(temporary, to: target)
            return
        }
        do {
            try POSIX.rename(temporary, to: target, flag: .noReplace)
            return
        } catch where POSIX.isUnsupported(error) {
            try createByLinking(temporary, to: target)
        }
    }

    /// The creation used where `RENAME_NOREPLACE` is unsupported: `link` (fails with EEXIST if the
    /// name is taken, atomically) then `unlink` of the temporary name; where hard links are
    /// unsupported too, a check for an existing item then `rename` (a small race, the only one).
    static func createByLinking(_ temporary: SystemPath, to target: SystemPath) throws(SystemCallError) {
        do {
            try POSIX.link(temporary, to: target)
            POSIX.removeFileQuietly(temporary)
        } catch where error.code == EPERM || error.code == EOPNOTSUPP || error.code == EMLINK {
            if try POSIX.linkStatus(target) != nil {
                throw SystemCallError(call: "rename", path: target.lossless, code: EEXIST)
            }
            try POSIX.rename(temporary, to: target)
        }
    }

    /// ``moveFileIntoPlace(_:to:creating:)`` for lossless path strings (migration path: for
    /// callers not yet moved to `SystemPath`).
    static func moveFileIntoPlace(_ temporary: String, to target: String, creating: Bool) throws(SystemCallError) {
        try moveFileIntoPlace(SystemPath(lossless: temporary), to: SystemPath(lossless: target), creating: creating)
    }

    /// ``createByLinking(_:to:)`` for lossless path strings (migration path).
    static func createByLinking(_ temporary: String, to target: String) throws(SystemCallError) {
        try createByLinking(SystemPath(lossless: temporary), to: SystemPath(lossless: target))
    }
}
