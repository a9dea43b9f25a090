import Foundation
import Glibc

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
        let made = folder.withCString { mkdir($0, 0o700) }
        guard made == 0 else { throw .ioFailed(path: folderDisplay, errno: errno) }
        do {
            return try fill(folder, from: url, limits: limits)
        } catch {
            removeTree(folder)
            throw error
        }
    }

    private static func fill(_ folder: [UInt8], from url: URL, limits: ZipLimits) throws(CoordinationError) -> URL {
        let itemPath = fileSystemPath(url)
        let source = try SnapshotFile.open(itemPath, in: AT_FDCWD, flags: O_RDONLY | O_NONBLOCK,
                                           displayPath: String(decoding: itemPath, as: UTF8.self))
        let info = try source.status()
        let name = lastComponent(of: itemPath)
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
            let copy = try createFile(copyPath, mode: info.st_mode & 0o777)
            try copyContents(of: source, length: UInt64(info.st_size), to: copy)
            return fileURL(copyPath, isDirectory: false)
        default:
            throw .invalidRequest("\(source.path) is neither a file nor a folder, so it has no upload snapshot.")
        }
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

    private static func createFile(_ path: [UInt8], mode: mode_t) throws(CoordinationError) -> SnapshotFile {
        let file = try SnapshotFile.open(path, in: AT_FDCWD, flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode,
                                         displayPath: String(decoding: path, as: UTF8.self))
        return file
    }

    /// Removes the private folder after a failure (best effort: it is ours and holds only what we made).
    private static func removeTree(_ folder: [UInt8]) {
        let path = String(decoding: folder, as: UTF8.self)
        try? FileManager.default.removeItem(atPath: path)
    }

    // MARK: Paths as bytes

    private static func fileSystemPath(_ url: URL) -> [UInt8] {
        url.withUnsafeFileSystemRepresentation { pointer in
            guard let pointer else { return Array(url.path.utf8) }
            return Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                             count: strlen(pointer)))
        }
    }

    private static func lastComponent(of path: [UInt8]) -> [UInt8] {
        let name = path.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? []
        return name.isEmpty || name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")]
            ? Array("upload".utf8) : name
    }

    private static func fileURL(_ path: [UInt8], isDirectory: Bool) -> URL {
        (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                URL(fileURLWithFileSystemRepresentation: $0.baseAddress!, isDirectory: isDirectory, relativeTo: nil)
            }
        }
    }
}

private extension Array where Element == UInt8 {
    func withCString<Result>(_ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (self + [0]).map { CChar(bitPattern: $0) }.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
