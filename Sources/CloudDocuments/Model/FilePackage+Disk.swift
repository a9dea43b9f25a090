import Foundation
import Glibc
import SystemSupport

extension FilePackage {
    /// The deepest nesting of folders ``read(from:)`` accepts, against bind-mount loops.
    static let maximumDepth = 256

    /// Reads the folder at `directoryURL` and everything inside it into memory.
    ///
    /// The folder itself may be reached through a symbolic link; inside it, only regular files and
    /// folders are accepted. Files are read whole.
    ///
    /// - Throws: ``DocumentError/fileNotFound(_:)`` if nothing is at the URL (or an item vanished
    ///   while reading); ``DocumentError/notReadable(_:underlying:errno:)`` if it is not a folder or an
    ///   item cannot be read (permissions, I/O error); ``DocumentError/unsupportedPackageEntry(_:kind:)``
    ///   for a symbolic link, device, socket or FIFO inside;
    ///   ``DocumentError/invalidPackageEntryName(_:)`` for a name that is not valid UTF-8;
    ///   ``DocumentError/contentsInvalid(_:)`` for folders nested deeper than 256 levels.
    ///
    /// Threading: synchronous and blocking; any thread. The caller should hold a coordinated read
    /// of the package, otherwise a concurrent writer can make the result a mix of two versions.
    public static func read(from directoryURL: URL) throws(DocumentError) -> FilePackage {
        // The URL's bytes, resolved by the kernel (a `..` after a linked folder included).
        let path = PathBytes.path(of: directoryURL)
        let info: stat?
        do { info = try POSIX.status(path) } catch { throw .forRead(error) }
        guard let info else { throw .fileNotFound(directoryURL) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .notReadable(directoryURL, underlying: "it is a \(kindName(info.st_mode)), not a folder")
        }
        return try readFolder(path, depth: 0)
    }

    private static func readFolder(_ path: String, depth: Int) throws(DocumentError) -> FilePackage {
        guard depth < maximumDepth else {
            throw .contentsInvalid("the folders inside “\(path)” are nested more than \(maximumDepth) levels deep")
        }
        let listing: (names: [String], invalid: [String])
        do { listing = try POSIX.directoryEntries(path) } catch { throw .forRead(error) }
        if let bad = listing.invalid.first { throw .invalidPackageEntryName(bad) }

        var entries: [String: Entry] = [:]
        for name in listing.names {
            let childPath = path + "/" + name
            let childInfo: stat?
            do { childInfo = try POSIX.linkStatus(childPath) } catch { throw .forRead(error) }
            guard let childInfo else { throw .fileNotFound(PathBytes.fileURL(childPath)) }
            switch childInfo.st_mode & S_IFMT {
            case S_IFREG:
                entries[name] = .file(try readRegularFile(childPath))
            case S_IFDIR:
                entries[name] = .directory(try readFolder(childPath, depth: depth + 1))
            default:
                throw .unsupportedPackageEntry(PathBytes.fileURL(childPath), kind: kindName(childInfo.st_mode))
            }
        }
        return FilePackage(validatedEntries: entries)
    }

    /// Reads a regular file whole. Opened with `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat`,
    /// so that an item replaced by a link or a FIFO since it was listed is rejected, not followed
    /// or waited on.
    private static func readRegularFile(_ path: String) throws(DocumentError) -> Data {
        let file: FileDescriptor
        do { file = try POSIX.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) } catch {
            if error.code == ELOOP {
                throw .unsupportedPackageEntry(PathBytes.fileURL(path), kind: "symbolic link")
            }
            throw .forRead(error)
        }
        defer { _ = Glibc.close(file.rawValue) }
        do throws(SystemCallError) {
            let info = try file.status()
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw SystemCallError(call: "read", path: path, code: EINVAL)
            }
            if ReadLimits.refusal(forSize: Int64(info.st_size)) != nil {
                throw SystemCallError(call: "read (file larger than memory)", path: path, code: EFBIG)
            }
            return try file.readToEnd(sizeHint: Int(info.st_size))
        } catch {
            throw .forRead(error)
        }
    }

    /// A readable name for the kind of a file-system item, from its `st_mode`.
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "regular file"
        case S_IFDIR: return "folder"
        case S_IFLNK: return "symbolic link"
        case S_IFIFO: return "FIFO (named pipe)"
        case S_IFSOCK: return "socket"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        default: return "special file"
        }
    }

    /// Creates the folder `directoryURL` and writes the package into it: every file written fully
    /// and `fsync`ed, every folder `fsync`ed after its entries, then the containing folder
    /// `fsync`ed. Files get `0644` and folders `0755`, less the umask.
    ///
    /// This is not an atomic replace: it refuses to write over anything. To replace an existing
    /// package safely use ``SafeSave/writePackage(_:to:creating:progress:)``.
    ///
    /// - Throws: ``DocumentError/alreadyExists(_:)`` if anything is at the URL;
    ///   ``DocumentError/folderMissing(_:)``, ``DocumentError/diskFull(_:errno:)``,
    ///   ``DocumentError/notWritable(_:errno:)`` or ``DocumentError/saveFailed(_:reason:errno:)``
    ///   otherwise. On failure, whatever was created is removed.
    ///
    /// Threading: synchronous and blocking; any thread.
    public func write(to directoryURL: URL) throws(DocumentError) {
        var path = PathBytes.path(of: directoryURL)
        while path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") { path.removeLast() }
        let folder = SavePaths.split(path).folder
        let key = SafeSave.injectionKey(directoryURL)
        do throws(SystemCallError) {
            try SafeSave.checkInjectedFailure(.createTemporary, key: key, path: path)
            try POSIX.makeDirectory(path, mode: 0o755)
        } catch {
            if error.code == EEXIST { throw .alreadyExists(directoryURL) }
            throw .forSave(error, target: directoryURL, folder: folder)
        }
        do throws(SystemCallError) {
            var writer = PackageTreeWriter(injectionKey: key, progress: nil)
            try writer.writeEntries(of: self, into: path)
            try SafeSave.checkInjectedFailure(.fsync, key: key, path: path)
            try POSIX.syncDirectory(path)
            try SafeSave.checkInjectedFailure(.directoryFsync, key: key, path: folder)
            try POSIX.syncDirectory(folder)
        } catch {
            POSIX.removeTree(path)
            throw .forSave(error, target: directoryURL, folder: folder)
        }
    }
}
