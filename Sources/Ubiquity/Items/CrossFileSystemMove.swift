import Foundation
import Glibc
import SystemSupport

/// A move that `rename` cannot do (EXDEV: another file system), done so that no step can lose
/// the item and none leaves part of it under the final name:
///
/// 1. the temporary items a killed earlier move left for this destination are reclaimed
///    (``MoveTemporaryItems``);
/// 2. the item is copied under a temporary, hidden name beside the destination, locked while it
///    is written (``DurableTreeCopy``: every file and folder `fsync`ed);
/// 3. it is renamed to the final name without replacing anything (`renameat2(RENAME_NOREPLACE)`)
///    and the destination folder is `fsync`ed;
/// 4. only then is the original removed (and its folder `fsync`ed).
///
/// A failure in 1–3 removes the temporary item and leaves the original untouched. A process
/// killed in 2 leaves only the temporary item, which the next move to that destination removes;
/// killed in 4, the item is whole at the destination and partly still at the source. Runs inside
/// the coordinated write of both items. Internal; blocking.
enum CrossFileSystemMove {
    /// Moves `from` to `to` (lossless path strings without trailing slashes).
    static func move(_ from: String, to: String) throws(UbiquitousMoveFailure) {
        let failed = { (error: Errno) in UbiquitousMoveFailure.ubiquity(.moveFailed(source: from, destination: to, errno: error)) }
        guard let (folder, name) = ItemTree.split(to) else { throw failed(Errno(rawValue: EINVAL)) }
        // `renameat2` answers EXDEV before it looks at the destination, so nothing checked it yet.
        guard !UbiquityAccount.itemExists(PathBytes.fileURL(to)) else {
            throw .ubiquity(.destinationExists(path: PathBytes.display(to)))
        }
        guard name.count <= 255 else { throw failed(Errno(rawValue: ENAMETOOLONG)) }
        var info = stat()
        guard PathBytes.withCString(from, { lstat($0, &info) }) == 0 else { throw failed(.current) }

        MoveTemporaryItems.reclaim(beside: to)
        if info.st_mode & S_IFMT == S_IFLNK {
            // A link is made whole by one `symlink`, which never replaces anything.
            do throws(Errno) { try DurableTreeCopy.copyLink(from, info: info, to: to) } catch {
                if error.rawValue == EEXIST { throw .ubiquity(.destinationExists(path: PathBytes.display(to))) }
                throw failed(error)
            }
        } else {
            let (temporary, lock) = try copyUnderTemporaryName(from, info: info, folder: folder, name: name, failed: failed)
            // Into place, never over anything: an item that took the name meanwhile stays.
            if let error = renameWithoutReplacing(temporary, to: to) {
                _ = ItemTree.remove(temporary)
                _ = Glibc.close(lock)
                if error.rawValue == EEXIST { throw .ubiquity(.destinationExists(path: PathBytes.display(to))) }
                throw failed(error)
            }
            _ = Glibc.close(lock)
        }
        // Until the new name is on disk, the original is the only durable copy: keep it.
        if let error = ItemTree.syncFolder(folder) {
            _ = ItemTree.remove(to)
            throw failed(error)
        }

        if let error = ItemTree.remove(from) {
            // A file (or link) that cannot be removed — a read-only or immutable original — is
            // still whole where it was: take the copy back, so the item is in one place. A folder
            // may have lost part of its contents already, so its copy, the one whole item, stays.
            var now = stat()
            if PathBytes.withCString(from, { lstat($0, &now) }) == 0, now.st_mode & S_IFMT != S_IFDIR {
                _ = ItemTree.remove(to)
                _ = ItemTree.syncFolder(folder)
            }
            throw failed(error)
        }
        // Best effort: should the removal be lost, the item is in both places, never in none.
        if let (sourceFolder, _) = ItemTree.split(from) { _ = ItemTree.syncFolder(sourceFolder) }
    }

    /// Step 2: the whole item (a file or a folder), flushed, under a fresh temporary name in
    /// `folder`. Returns that path and the descriptor holding its lock (close it once the item is
    /// renamed or removed). On failure the temporary item is removed.
    private static func copyUnderTemporaryName(_ from: String, info: stat, folder: String, name: [UInt8],
                                               failed: (Errno) -> UbiquitousMoveFailure) throws(UbiquitousMoveFailure) -> (String, Int32) {
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        var created: (String, Int32)?
        for _ in 0..<4 where created == nil {
            let temporary = ItemTree.join(folder, MoveTemporaryItems.name(for: name))
            switch isFolder ? MoveTemporaryItems.createLockedFolder(temporary) : MoveTemporaryItems.createLockedFile(temporary) {
            case .success(let descriptor): created = (temporary, descriptor)
            case .failure(let error) where error.rawValue == EEXIST: continue
            case .failure(let error): throw failed(error)
            }
        }
        guard let (temporary, lock) = created else { throw failed(Errno(rawValue: EEXIST)) }
        do throws(Errno) {
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                try DurableTreeCopy.copyFolderContents(from, info: info, into: temporary, descriptor: lock, temporaryItem: temporary)
            case S_IFREG:
                try DurableTreeCopy.copyFile(from, info: info, into: lock, temporaryItem: temporary)
            default:
                throw Errno(rawValue: EOPNOTSUPP)
            }
        } catch {
            _ = ItemTree.remove(temporary)
            _ = Glibc.close(lock)
            throw failed(error)
        }
        return (temporary, lock)
    }

    /// `renameat2(RENAME_NOREPLACE)`; where the file system lacks it, a check then `rename`
    /// (both under the coordinated write of the destination). The error, or nil.
    private static func renameWithoutReplacing(_ source: String, to destination: String) -> Errno? {
        switch RenameAt2.rename(source, to: destination, flag: .noReplace) {
        case .success: return nil
        case .failure(let error) where RenameAt2.isUnsupported(error):
            guard !UbiquityAccount.itemExists(PathBytes.fileURL(destination)) else { return Errno(rawValue: EEXIST) }
            let result = PathBytes.withCString(source) { a in PathBytes.withCString(destination) { b in valueOrErrno { rename(a, b) } } }
            if case .failure(let error) = result { return error }
            return nil
        case .failure(let error): return error
        }
    }
}
