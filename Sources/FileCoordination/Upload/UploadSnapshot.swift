import Foundation
import Glibc
import SystemSupport

/// Temporary copies for `.forUploading` reads: a copy of a file, or a ZIP archive of a folder,
/// in a fresh private folder (mode 0700) under the temporary directory. The caller removes the
/// folder after the accessor returns.
///
/// Both are streamed in chunks of ``ZipArchiveWriter/chunkSize``, whatever the size of the item
/// or the number of entries in the folder; holes of sparse files stay holes. The item is opened
/// (following a symbolic link given as the item itself) and its kind decided from what was
/// opened, under the caller's lock. On failure nothing is left behind and the error is
/// ``CoordinationError/ioFailed(path:errno:)`` naming the file that failed, or
/// ``CoordinationError/invalidRequest(_:)`` for an item that is neither a file nor a folder.
enum UploadSnapshot {
    /// - Parameters:
    ///   - isDirectory: what the caller's `lstat` saw before locking; not relied on (the kind is
    ///     decided again from the opened item).
    ///   - temporaryFolder: where the private folder is made (tests point it elsewhere).
    ///   - limits: where ZIP64 records start (tests lower them).
    static func make(of url: URL, isDirectory _: Bool,
                     in temporaryFolder: URL = FileManager.default.temporaryDirectory,
                     limits: ZipLimits = .standard) throws(CoordinationError) -> URL {
        let folder = fileSystemPath(temporaryFolder) + Array("/clouddocuments-upload-\(UUID().uuidString)".utf8)
        let folderDisplay = String(decoding: folder, as: UTF8.self)
        // errno is read inside the closure (`valueOrErrno`), right after the call returns.
        let made = folder.withCString { cFolder in valueOrErrno { mkdir(cFolder, 0o700) } }
        if case .failure(let error) = made { throw .ioFailed(path: folderDisplay, errno: error) }
        do {
            return try fill(folder, from: url, limits: limits)
        } catch {
            removeTree(folder)
            throw error
        }
    }

    private static func fill(_ folder: [UInt8], from url: URL, limits: ZipLimits) throws(CoordinationError) -> URL {
        let itemPath = fileSystemPath(url)
        let display = String(decoding: itemPath, as: UTF8.self)
        var before = stat()
        if case .failure(let error) = itemPath.withCString({ cPath in valueOrErrno { stat(cPath, &before) } }) {
            throw .ioFailed(path: display, errno: error)
        }
        guard [S_IFDIR, S_IFREG].contains(before.st_mode & S_IFMT) else { throw notUploadable(display) }
        let source = try SnapshotFile.open(itemPath, in: AT_FDCWD, flags: O_RDONLY | O_NONBLOCK, displayPath: display)
        let info = try source.status()
        let name = snapshotName(for: itemPath)
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            let archivePath = folder + [UInt8(ascii: "/")] + name + Array(".zip".utf8)
            let archive = try createFile(archivePath, mode: 0o600)
            var folderInfo = stat()
            _ = folder.withCString { stat($0, &folderInfo) }
            let writer = ZipArchiveWriter(archive: archive, scratchFolder: String(decoding: folder, as: UTF8.self),
                                          limits: limits)
            try FolderArchiver(writer: writer, excluded: (UInt64(folderInfo.st_dev), UInt64(folderInfo.st_ino)))
                .archive(source)
            try writer.finish()
            return fileURL(archivePath, isDirectory: false)
        case S_IFREG:
            let copyPath = folder + [UInt8(ascii: "/")] + name
            // The original's permissions, and the owner may always read the copy.
            let copy = try createFile(copyPath, mode: info.st_mode & 0o777 | 0o600)
            try copyContents(of: source, length: UInt64(info.st_size), to: copy)
            return fileURL(copyPath, isDirectory: false)
        default:
            throw notUploadable(display)  // replaced by something else since the `stat`
        }
    }

    private static func notUploadable(_ path: String) -> CoordinationError {
        .invalidRequest("\(path) is neither a file nor a folder, so it has no upload snapshot.")
    }

    /// Streams a file into `copy`, leaving its holes as holes.
    private static func copyContents(of source: SnapshotFile, length: UInt64, to copy: SnapshotFile) throws(CoordinationError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ZipArchiveWriter.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var position: UInt64 = 0
        let copied = try SparseFileReader.stream(source, length: length, buffer: buffer,
            data: { bytes throws(CoordinationError) in
                try copy.write(bytes, at: position)
                position += UInt64(bytes.count)
            },
            hole: { count in position += count })
        try copy.truncate(to: copied)  // gives the copy its length when it ends in a hole
    }

    /// Creates a file with exactly `mode` (whatever the umask).
    private static func createFile(_ path: [UInt8], mode: mode_t) throws(CoordinationError) -> SnapshotFile {
        let file = try SnapshotFile.open(path, in: AT_FDCWD, flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode,
                                         displayPath: String(decoding: path, as: UTF8.self))
        guard fchmod(file.descriptor, mode) == 0 else { throw .ioFailed(path: file.path, errno: .current) }
        return file
    }

    /// Removes the private folder after a failure (best effort: it is ours and holds only what we made).
    private static func removeTree(_ folder: [UInt8]) {
        let path = String(decoding: folder, as: UTF8.self)
        try? FileManager.default.removeItem(atPath: path)
    }

    // MARK: Paths as bytes

    /// The item's path as the kernel sees it: exact bytes, also for names that are not UTF-8
    /// (Foundation's `withUnsafeFileSystemRepresentation` gives an empty string for those).
    private static func fileSystemPath(_ url: URL) -> [UInt8] {
        PathBytes.bytes(of: PathBytes.path(of: url))
    }

    /// The snapshot's file name: the item's last path component, made valid UTF-8 (bytes that
    /// are not become U+FFFD) so that the URL handed to the accessor names the file exactly.
    /// Names *inside* an archive keep their bytes.
    private static func snapshotName(for path: [UInt8]) -> [UInt8] {
        let name = path.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? []
        if name.isEmpty || name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] {
            return Array("upload".utf8)
        }
        return Array(String(decoding: name, as: UTF8.self).utf8)
    }

    /// The snapshot's URL (its path is valid UTF-8: see ``snapshotName(for:)``).
    private static func fileURL(_ path: [UInt8], isDirectory: Bool) -> URL {
        URL(fileURLWithPath: String(decoding: path, as: UTF8.self), isDirectory: isDirectory)
    }
}

private extension Array where Element == UInt8 {
    func withCString<Result>(_ body: (UnsafePointer<CChar>) -> Result) -> Result {
        let characters = (self + [0]).map { CChar(bitPattern: $0) }
        return body(characters)
    }
}
