import Glibc
import SystemSupport

/// Adds everything inside a folder to a ``ZipArchiveWriter``, depth first, names in byte order.
///
/// - Folders become `name/` members (so empty folders survive); files are streamed; symbolic
///   links are stored as links (never followed, so nothing outside the folder gets in).
/// - FIFOs, sockets and device files are left out: reading them could block or have effects.
/// - Names are the raw bytes the kernel gives; the UTF-8 flag is set only for valid UTF-8.
/// - Items that vanish between being listed and being opened are left out, as if they had gone
///   a moment earlier; any other failure throws ``CoordinationError/ioFailed(path:errno:)``.
///
/// Everything is opened relative to its parent's descriptor, so paths of any depth work and a
/// folder replaced by a link while the walk runs is not followed. The walk keeps one descriptor
/// and one name list per level of nesting.
struct FolderArchiver {
    private struct Level {
        let folder: SnapshotFile
        /// The member-name prefix of this folder's children (empty or ending in `/`).
        let prefix: [UInt8]
        var names: [[UInt8]]
        var next = 0
    }

    let writer: ZipArchiveWriter
    /// The snapshot's own folder (device, inode): never archived into itself.
    let excluded: (device: UInt64, inode: UInt64)

    func archive(_ root: SnapshotFile) throws(CoordinationError) {
        var stack = [Level(folder: root, prefix: [], names: try Self.names(in: root))]
        while let top = stack.last {
            guard top.next < top.names.count else {
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let name = top.names[top.next]
            if let child = try add(name, in: top) { stack.append(child) }
        }
    }

    /// Adds one item; returns the level to descend into when it is a folder.
    private func add(_ name: [UInt8], in parent: Level) throws(CoordinationError) -> Level? {
        let display = parent.folder.path + "/" + String(decoding: name, as: UTF8.self)
        let memberName = parent.prefix + name
        guard memberName.count < Int(UInt16.max) else { throw .ioFailed(path: display, errno: .fileNameTooLong) }
        let cName = (name + [0]).map { CChar(bitPattern: $0) }
        var info = stat()
        guard fstatat(parent.folder.descriptor, cName, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw .ioFailed(path: display, errno: .current)
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            guard UInt64(info.st_dev) != excluded.device || UInt64(info.st_ino) != excluded.inode,
                  let folder = try Self.openVanishable(name, in: parent.folder,
                                                       flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW, display: display)
            else { return nil }
            let status = try folder.status()
            try writer.addDirectory(name: memberName + [UInt8(ascii: "/")], mode: status.st_mode,
                                    modified: status.st_mtim.tv_sec)
            return Level(folder: folder, prefix: memberName + [UInt8(ascii: "/")], names: try Self.names(in: folder))
        case S_IFREG:
            guard let file = try Self.openVanishable(name, in: parent.folder,
                                                     flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK, display: display)
            else { return nil }
            let status = try file.status()
            guard status.st_mode & S_IFMT == S_IFREG else { return nil }  // replaced meanwhile
            try writer.addFile(name: memberName, source: file, length: UInt64(status.st_size),
                               mode: status.st_mode, modified: status.st_mtim.tv_sec)
        case S_IFLNK:
            var target = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = target.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { characters in
                    guard let base = characters.baseAddress else { return -1 }
                    return readlinkat(parent.folder.descriptor, cName, base, characters.count)
                }
            }
            guard count >= 0 else {
                if errno == ENOENT || errno == EINVAL { return nil }  // gone, or no longer a link
                throw .ioFailed(path: display, errno: .current)
            }
            try writer.addSymbolicLink(name: memberName, target: Array(target.prefix(count)),
                                       modified: info.st_mtim.tv_sec)
        default:
            break  // FIFO, socket or device: left out
        }
        return nil
    }

    /// Opens a child; `nil` when it vanished or was replaced by something else meanwhile.
    private static func openVanishable(_ name: [UInt8], in folder: SnapshotFile, flags: Int32,
                                       display: String) throws(CoordinationError) -> SnapshotFile? {
        do {
            return try SnapshotFile.open(name, in: folder.descriptor, flags: flags, displayPath: display)
        } catch {
            if case .ioFailed(_, let code) = error, [Errno.noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinkLevels].contains(code) { return nil }
            throw error
        }
    }

    /// The names in a folder (without `.` and `..`), sorted by their bytes.
    private static func names(in folder: SnapshotFile) throws(CoordinationError) -> [[UInt8]] {
        var names: [[UInt8]]
        switch FolderEntries.names(inFolder: folder.descriptor) {
        case .success(let found): names = found
        case .failure(let error): throw .ioFailed(path: folder.path, errno: error)
        }
        names.sort { $0.lexicographicallyPrecedes($1) }
        return names
    }
}
