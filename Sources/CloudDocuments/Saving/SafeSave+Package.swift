import Foundation
import Glibc

extension SafeSave {
    /// Saves a whole directory document at `url`, atomically and durably.
    ///
    /// The package is written into a temporary folder beside the target (every file and folder
    /// `fsync`ed; the folder gets the old package's owner and permission bits, or `0755 & ~umask`),
    /// then put in place in one step: when a package (or file) exists at `url`,
    /// `renameat2(RENAME_EXCHANGE)` swaps the two, the containing folder is `fsync`ed, and the old
    /// tree (now under the temporary name) is removed; when nothing exists, a `rename`
    /// (`RENAME_NOREPLACE` when creating). Readers see either the whole old package or the whole
    /// new one. Files of the old package absent from the new one are gone afterwards.
    ///
    /// On file systems without `RENAME_EXCHANGE`, the old package is first renamed aside and put
    /// back if the second rename fails: the target is then missing for an instant (never
    /// half-written). Without `RENAME_NOREPLACE`, creating uses a plain `rename`, which can replace
    /// an empty folder that appeared meanwhile (but never a file or a non-empty folder).
    ///
    /// - Parameters:
    ///   - package: The complete new contents.
    ///   - url: A file URL. Its folder must exist.
    ///   - creating: `true` for ``SaveOperation/forCreating``: fails if anything exists at `url`.
    ///   - progress: Called on the calling thread with the running total of file bytes written.
    /// - Throws: The same ``DocumentError`` cases as ``write(_:to:creating:progress:)`` (a name too
    ///   long for the file system gives `saveFailed` with `ENAMETOOLONG`). On failure the old
    ///   package is intact and the temporary tree has been removed,
    ///   except for the `saveFailed` whose reason says the new contents are in place but the folder
    ///   could not be flushed. Removing the old tree after a successful swap is best effort: if it
    ///   fails (it should not), a hidden `.<name>.cdsave-…` folder may remain and no error is thrown.
    ///
    /// Threading: synchronous and blocking; any thread.
    public static func writePackage(_ package: FilePackage, to url: URL, creating: Bool,
                                    progress: ((Int64) -> Void)? = nil) throws(DocumentError) {
        ReplacedFileRelease.closePending()
        let paths = try SavePaths(for: url)
        StrayTemporaryFiles.reclaimIfDue(besideTarget: paths.target)
        let existing: stat?
        do { existing = try POSIX.status(paths.targetPath) } catch {
            throw .forSave(error, target: url, folder: paths.folder)
        }
        if creating && existing != nil { throw .alreadyExists(url) }

        let temporaryLock: TemporaryItemLock
        do throws(SystemCallError) {
            try checkInjectedFailure(.createTemporary, key: paths.injectionKey, path: paths.temporary)
            temporaryLock = try StrayTemporaryFiles.createLockedFolder(paths.temporaryPath, mode: 0o700)
        } catch {
            throw .forSave(error, target: url, folder: paths.folder)
        }
        defer { temporaryLock.release() }

        let oldTree: SystemPath?
        do throws(SystemCallError) {
            var writer = PackageTreeWriter(injectionKey: paths.injectionKey, progress: progress)
            try writer.writeEntries(of: package, into: paths.temporaryPath)
            let folderAttributes = existing.flatMap { $0.st_mode & S_IFMT == S_IFDIR ? $0 : nil }
            try finishTopFolder(paths.temporaryPath, like: folderAttributes, injectionKey: paths.injectionKey)
            try checkInjectedFailure(.rename, key: paths.injectionKey, path: paths.target)
            oldTree = try moveFolderIntoPlace(paths.temporaryPath, to: paths.targetPath,
                                              targetExists: existing != nil, creating: creating)
        } catch {
            POSIX.removeTree(paths.temporaryPath)
            if creating && error.code == EEXIST { throw .alreadyExists(url) }
            throw .forSave(error, target: url, folder: paths.folder)
        }

        var flushError: SystemCallError?
        do throws(SystemCallError) {
            try checkInjectedFailure(.directoryFsync, key: paths.injectionKey, path: paths.folder)
            try POSIX.syncDirectory(paths.folderPath)
        } catch {
            flushError = error
        }
        if let oldTree { POSIX.removeTree(oldTree) }
        if let flushError {
            throw .saveFailed(url, reason: "the new contents are in place, but the folder could not be flushed to disk (\(flushError.call))", errno: flushError.errno)
        }
    }

    /// Gives the temporary package folder its final owner and permissions and `fsync`s it.
    private static func finishTopFolder(_ path: SystemPath, like original: stat?, injectionKey: String) throws(SystemCallError) {
        let folder = try POSIX.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        do throws(SystemCallError) {
            try checkInjectedFailure(.setPermissions, key: injectionKey, path: path.lossless)
            try carryOverAttributes(of: original, to: folder, defaultMode: 0o755)
            try checkInjectedFailure(.fsync, key: injectionKey, path: path.lossless)
            try folder.sync()
        } catch {
            _ = Glibc.close(folder.rawValue)
            throw error
        }
        try folder.close()
    }

    /// The final step for a package. Returns the path where the old contents now are (to be
    /// removed by the caller), or `nil` when there were none. Throws errno EEXIST when creating and
    /// the target exists. When this throws, the target is as it was and `temporary` still holds
    /// the new tree.
    private static func moveFolderIntoPlace(_ temporary: SystemPath, to target: SystemPath,
                                            targetExists: Bool, creating: Bool) throws(SystemCallError) -> SystemPath? {
        if creating {
            do {
                try POSIX.rename(temporary, to: target, flag: .noReplace)
            } catch where POSIX.isUnsupported(error) {
                try POSIX.rename(temporary, to: target)
            }
            return nil
        }
        guard targetExists else {
            try POSIX.rename(temporary, to: target)
            return nil
        }
        do {
            try POSIX.rename(temporary, to: target, flag: .exchange)
            return temporary
        } catch where error.code == ENOENT {
            // The old package vanished while we were writing: nothing to swap with.
            try POSIX.rename(temporary, to: target)
            return nil
        } catch where POSIX.isUnsupported(error) {
            return try replaceByMovingAside(temporary, to: target)
        }
    }

    /// The replacement used where `RENAME_EXCHANGE` is unsupported: moves the old item aside to a
    /// hidden `.<name>.cdold-…` name, renames the new one in, and moves the old one back if that
    /// fails. Returns where the old item now is. The target is missing for an instant.
    static func replaceByMovingAside(_ temporary: SystemPath, to target: SystemPath) throws(SystemCallError) -> SystemPath {
        let aside = SystemPath(lossless: SavePaths.siblingName(of: target.lossless, marker: "cdold"))
        try POSIX.rename(target, to: aside)
        do {
            try POSIX.rename(temporary, to: target)
        } catch {
            _ = POSIX.withCStrings(aside, target) { Glibc.rename($0, $1) }
            throw error
        }
        return aside
    }

    /// ``replaceByMovingAside(_:to:)`` for lossless path strings (migration path: for callers not
    /// yet moved to `SystemPath`).
    static func replaceByMovingAside(_ temporary: String, to target: String) throws(SystemCallError) -> String {
        try replaceByMovingAside(SystemPath(lossless: temporary), to: SystemPath(lossless: target)).lossless
    }
}
