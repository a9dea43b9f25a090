import Foundation
import Glibc

/// What identifies one version of a file on disk: device, inode, size, modification and status
/// change times (to the nanosecond). A document remembers the identity of what it last read or
/// wrote, so it can tell a change made by someone else from the echo of its own save.
///
/// For a package (a folder) this is the folder's own identity, which changes when entries are
/// added, removed or renamed — which is what a safe save of a package does.
struct DiskIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modificationSeconds: Int
    var modificationNanoseconds: Int
    var changeSeconds: Int
    var changeNanoseconds: Int

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modificationSeconds = Int(info.st_mtim.tv_sec)
        modificationNanoseconds = Int(info.st_mtim.tv_nsec)
        changeSeconds = Int(info.st_ctim.tv_sec)
        changeNanoseconds = Int(info.st_ctim.tv_nsec)
    }

    /// The identity of the item at `url` (following symbolic links), or `nil` if it cannot be
    /// examined. Any thread.
    static func of(_ url: URL) -> DiskIdentity? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return DiskIdentity(info)
    }

    /// The modification time as a `Date`.
    var modificationDate: Date {
        Date(timeIntervalSince1970: TimeInterval(modificationSeconds) + TimeInterval(modificationNanoseconds) / 1e9)
    }
}

/// Reads a document's contents from disk: the bytes of a regular file, or a whole ``FilePackage``
/// for a folder. Synchronous and blocking; called on a background thread from inside a
/// coordinated read.
enum DocumentReader {
    /// The size of each `read(2)`, and so the granularity of progress reports: 1 MiB.
    static let chunkSize = 1 << 20

    /// Reads the item at `url`.
    ///
    /// - Parameters:
    ///   - url: Where to read (the URL the coordinator handed to the accessor).
    ///   - documentURL: The URL to name in errors (the document's).
    ///   - largeFile: Called once, before reading a regular file, with its size; may return a
    ///     function to call with the number of bytes read so far after each chunk.
    /// - Throws: ``DocumentError/fileNotFound(_:)`` when nothing is at `url`;
    ///   ``DocumentError/notReadable(_:underlying:)`` when it cannot be opened or read, or is
    ///   neither a regular file nor a folder; what ``FilePackage/read(from:)`` throws for folders.
    static func read(at url: URL, documentURL: URL,
                     largeFile: (Int64) -> ((Int64) -> Void)?) throws(DocumentError) -> (DocumentContents, DiskIdentity) {
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .fileNotFound(documentURL) }
            throw .notReadable(documentURL, underlying: "stat failed: \(DocumentError.describe(errno: code))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            let package = try FilePackage.read(from: url)
            // The folder's identity after reading it (a concurrent writer is excluded by the
            // coordinated read the caller holds).
            let identity = DiskIdentity.of(url) ?? DiskIdentity(info)
            return (.package(package), identity)
        case S_IFREG:
            return try readFile(path, documentURL: documentURL, largeFile: largeFile)
        default:
            throw .notReadable(documentURL, underlying: "it is \(kindName(info.st_mode)), not a regular file or a folder")
        }
    }

    private static func readFile(_ path: String, documentURL: URL,
                                 largeFile: (Int64) -> ((Int64) -> Void)?) throws(DocumentError) -> (DocumentContents, DiskIdentity) {
        // O_NONBLOCK: should the item have become a FIFO since the stat, opening it must not hang.
        var descriptor: Int32
        repeat { descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .fileNotFound(documentURL) }
            throw .notReadable(documentURL, underlying: "open failed: \(DocumentError.describe(errno: code))")
        }
        defer { _ = Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .notReadable(documentURL, underlying: "fstat failed: \(DocumentError.describe(errno: errno))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .notReadable(documentURL, underlying: "it is \(kindName(info.st_mode)), not a regular file")
        }
        if let refusal = ReadLimits.refusal(forSize: Int64(info.st_size)) { throw .notReadable(documentURL, underlying: refusal) }
        let expected = Int(info.st_size)
        let report = largeFile(Int64(expected))

        // Read straight into the buffer that becomes the `Data` (no second copy), growing it if
        // the file is longer than its size said (files in /proc, or a racing uncoordinated writer).
        // One spare byte, so reaching the end of a file of the expected size needs no growth
        // (growing reallocates and copies the whole buffer).
        var buffer = Data(count: max(expected, 0) + 1)
        var total = 0
        var failure: Int32?
        while true {
            if total == buffer.count {
                if ReadLimits.refusal(forSize: Int64(total)) != nil { failure = EFBIG; break }
                buffer.count += max(chunkSize / 16, expected / 8)
            }
            let wanted = min(chunkSize, buffer.count - total)
            let count = buffer.withUnsafeMutableBytes { bytes in
                Glibc.read(descriptor, bytes.baseAddress! + total, wanted)
            }
            if count < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            if count == 0 { break }
            total += count
            report?(Int64(total))
        }
        if let failure {
            throw .notReadable(documentURL, underlying: "read failed: \(DocumentError.describe(errno: failure))")
        }
        if buffer.count != total { buffer.count = total }
        return (.data(buffer), DiskIdentity(info))
    }

    private static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFLNK: return "a symbolic link"
        default: return "an item of an unknown kind"
        }
    }
}
