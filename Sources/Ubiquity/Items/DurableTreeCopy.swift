import FileCoordination
import Glibc
import SystemSupport

/// The copy of a move across file systems: every file, folder, symbolic link and FIFO of a tree,
/// with its permission bits, owner (when the process may give it) and access and modification
/// times, each file and each folder `fsync`ed once written — a folder after everything inside
/// it. Symbolic links are copied as links (never followed). Not copied: extended attributes and
/// ACLs, and hard links inside the tree (each name gets a file of its own). Sockets and device
/// files are refused with EOPNOTSUPP. Internal; any thread; blocking.
enum DurableTreeCopy {
    /// The size of each `read`/`write`: 1 MiB.
    static let chunkSize = 1 << 20

    /// Copies the regular file `source` (whose `lstat` is `info`) into the open, empty file
    /// `descriptor`, gives it the source's attributes and `fsync`s it. `temporaryItem` is the
    /// top-level temporary item, for the test hook.
    static func copyFile(_ source: String, info: stat, into descriptor: Int32, temporaryItem: String) throws(Errno) {
        let input = try PathBytes.withCString(source) { path in valueOrErrno { open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) } }.get()
        defer { _ = Glibc.close(input) }
        var opened = stat()
        guard fstat(input, &opened) == 0 else { throw .current }
        // Replaced between the look and the open: not the item that was looked at.
        guard opened.st_dev == info.st_dev, opened.st_ino == info.st_ino else { throw Errno(rawValue: EAGAIN) }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var total: Int64 = 0
        var reportedFirstChunk = false
        while true {
            let count = try buffer.withUnsafeMutableBytes { raw in valueOrErrno { read(input, raw.baseAddress, raw.count) } }.get()
            if count == 0 { break }
            let failure: Errno? = buffer.withUnsafeBytes { raw in writeAll(descriptor, UnsafeRawBufferPointer(rebasing: raw[..<count])) }
            if let failure { throw failure }
            total += Int64(count)
            if !reportedFirstChunk {
                reportedFirstChunk = true
                CrossFileSystemMoveHooks.run(.init(temporaryItem: temporaryItem, file: source, bytesWritten: total, fileSize: Int64(info.st_size)))
            }
        }
        try applyAttributes(of: info, to: descriptor)
        guard fsync(descriptor) == 0 else { throw .current }
    }

    /// Copies everything inside the folder `source` into the existing, empty folder
    /// `destination` (open as `descriptor`), then gives it the attributes of `info` and `fsync`s it.
    static func copyFolderContents(_ source: String, info: stat, into destination: String, descriptor: Int32,
                                   temporaryItem: String) throws(Errno) {
        let folder = try PathBytes.withCString(source) { path in
            valueOrErrno { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        }.get()
        let names = ItemTree.names(inFolder: folder)
        _ = Glibc.close(folder)
        for name in try names.get() {
            try copyItem(ItemTree.join(source, name), to: ItemTree.join(destination, name), temporaryItem: temporaryItem)
        }
        try applyAttributes(of: info, to: descriptor)
        guard fsync(descriptor) == 0 else { throw .current }
    }

    /// Copies the item `source` to the new name `destination` (inside the temporary item).
    private static func copyItem(_ source: String, to destination: String, temporaryItem: String) throws(Errno) {
        var info = stat()
        _ = try PathBytes.withCString(source) { path in valueOrErrno { lstat(path, &info) } }.get()
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            let output = try PathBytes.withCString(destination) { path in
                valueOrErrno { open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600) }
            }.get()
            do throws(Errno) {
                try copyFile(source, info: info, into: output, temporaryItem: temporaryItem)
            } catch {
                _ = Glibc.close(output)
                throw error
            }
            guard Glibc.close(output) == 0 else { throw .current }
        case S_IFDIR:
            _ = try PathBytes.withCString(destination) { path in valueOrErrno { mkdir(path, 0o700) } }.get()
            let output = try PathBytes.withCString(destination) { path in
                valueOrErrno { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }.get()
            defer { _ = Glibc.close(output) }
            try copyFolderContents(source, info: info, into: destination, descriptor: output, temporaryItem: temporaryItem)
        case S_IFLNK:
            try copyLink(source, info: info, to: destination)
        case S_IFIFO:
            _ = try PathBytes.withCString(destination) { path in valueOrErrno { mkfifo(path, 0o600) } }.get()
            try applyAttributes(of: info, toPath: destination)
        default:
            throw Errno(rawValue: EOPNOTSUPP)
        }
    }

    /// Copies the symbolic link `source` as a link with the same target (made whole by one
    /// `symlink`, which fails with EEXIST rather than replace anything). Its owner and times
    /// follow, best effort: once the link exists, nothing else fails.
    static func copyLink(_ source: String, info: stat, to destination: String) throws(Errno) {
        var buffer = [CChar](repeating: 0, count: max(Int(info.st_size), Int(PATH_MAX)) + 1)
        let length = try PathBytes.withCString(source) { path in valueOrErrno { readlink(path, &buffer, buffer.count - 1) } }.get()
        buffer[length] = 0
        _ = try PathBytes.withCString(destination) { path in valueOrErrno { symlink(buffer, path) } }.get()
        if info.st_uid != geteuid() || info.st_gid != getegid() {
            _ = PathBytes.withCString(destination) { lchown($0, info.st_uid, info.st_gid) }
        }
        var times = [info.st_atim, info.st_mtim]
        _ = PathBytes.withCString(destination) { utimensat(AT_FDCWD, $0, &times, AT_SYMLINK_NOFOLLOW) }
    }

    /// Gives the open item `descriptor` the owner (best effort: only root may give items away),
    /// permission bits and times of `info`.
    private static func applyAttributes(of info: stat, to descriptor: Int32) throws(Errno) {
        if info.st_uid != geteuid() || info.st_gid != getegid() {
            if fchown(descriptor, info.st_uid, info.st_gid) != 0 { _ = fchown(descriptor, uid_t.max, info.st_gid) }
        }
        // After the owner: chown clears the set-user-ID and set-group-ID bits.
        guard fchmod(descriptor, info.st_mode & 0o7777) == 0 else { throw .current }
        var times = [info.st_atim, info.st_mtim]
        guard futimens(descriptor, &times) == 0 else { throw .current }
    }

    /// ``applyAttributes(of:to:)`` by path, for items that are not opened (FIFOs).
    private static func applyAttributes(of info: stat, toPath path: String) throws(Errno) {
        let failure: Errno? = PathBytes.withCString(path) { cPath in
            if info.st_uid != geteuid() || info.st_gid != getegid() {
                if lchown(cPath, info.st_uid, info.st_gid) != 0 { _ = lchown(cPath, uid_t.max, info.st_gid) }
            }
            guard chmod(cPath, info.st_mode & 0o7777) == 0 else { return .current }
            var times = [info.st_atim, info.st_mtim]
            guard utimensat(AT_FDCWD, cPath, &times, AT_SYMLINK_NOFOLLOW) == 0 else { return .current }
            return nil
        }
        if let failure { throw failure }
    }

    /// Writes every byte of `bytes`, retrying short writes and EINTR; the error, or nil.
    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Errno? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            switch valueOrErrno({ write(descriptor, base + offset, bytes.count - offset) }) {
            case .success(0): return Errno(rawValue: EIO)  // A regular file never takes nothing; don't spin.
            case .success(let written): offset += written
            case .failure(let error): return error
            }
        }
        return nil
    }
}

/// A hook into moves across file systems, for tests that must stop a move at a known point (a
/// `kill -9` in the middle of a copy). Package-internal.
package enum CrossFileSystemMoveHooks {
    /// Where a move's copy is.
    package struct Progress: Sendable {
        /// The temporary top-level item being filled (beside the destination).
        package let temporaryItem: String
        /// The file being copied (in the source tree).
        package let file: String
        /// Bytes of `file` written so far.
        package let bytesWritten: Int64
        /// The size of `file`.
        package let fileSize: Int64
    }

    /// Run on the moving thread after the first chunk of each file has been written into the
    /// temporary copy (before it is flushed). `nil`: nothing runs.
    package static let afterFirstChunk = Locked<(@Sendable (Progress) -> Void)?>(nil)

    static func run(_ progress: Progress) {
        afterFirstChunk.withLock { $0 }?(progress)
    }
}
