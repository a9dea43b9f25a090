import Foundation
import Glibc
import SystemSupport

/// What identifies one version of a file on disk (SystemSupport's `FileIdentity`: device, inode,
/// size, modification and status change times to the nanosecond). A document remembers the
/// identity of what it last read or wrote, so it can tell a change made by someone else from the
/// echo of its own save.
///
/// For a package (a folder) this is the folder's own identity, which changes when entries are
/// added, removed or renamed — which is what a safe save of a package does.
typealias DiskIdentity = FileIdentity

/// Reads a document's contents from disk: the bytes of a regular file, or a whole ``FilePackage``
/// for a folder. Synchronous and blocking; called on a background thread from inside a
/// coordinated read.
package enum DocumentReader {
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
    ///   ``DocumentError/notReadable(_:underlying:errno:)`` when it cannot be opened or read, or is
    ///   neither a regular file nor a folder; what ``FilePackage/read(from:)`` throws for folders.
    static func read(at url: URL, documentURL: URL,
                     largeFile: (Int64) -> ((Int64) -> Void)?) throws(DocumentError) -> (DocumentContents, DiskIdentity) {
        // The URL's exact bytes (a name that is not UTF-8 included), resolved by the kernel.
        let path = PathBytes.path(of: url)
        var info = stat()
        guard PathBytes.withCString(path, { stat($0, &info) }) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .fileNotFound(documentURL) }
            throw .notReadable(documentURL, underlying: "stat failed: \(Errno(rawValue: code))", errno: Errno(rawValue: code))
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

    /// The bytes of the regular file at `url` (a symbolic link is followed), read to the end, for
    /// programs of this package that read a file outside a document (`CoordinatedFileEdit`).
    /// Errors name `name`. Synchronous and blocking; any thread.
    ///
    /// - Throws: ``DocumentError/fileNotFound(_:)``, or ``DocumentError/notReadable(_:underlying:errno:)``
    ///   for an item that is not a regular file, is over the read limits or cannot be read.
    package static func regularFileContents(at url: URL, naming name: URL) throws(DocumentError) -> Data {
        let (contents, _) = try readFile(PathBytes.path(of: url), documentURL: name, largeFile: { _ in nil })
        return contents.data ?? Data()
    }

    private static func readFile(_ path: String, documentURL: URL,
                                 largeFile: (Int64) -> ((Int64) -> Void)?) throws(DocumentError) -> (DocumentContents, DiskIdentity) {
        // O_NONBLOCK: should the item have become a FIFO since the stat, opening it must not hang.
        let opened = PathBytes.withCString(path) { cPath in
            valueOrErrno { Glibc.open(cPath, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        }
        let descriptor: Int32
        switch opened {
        case .success(let value): descriptor = value
        case .failure(let error):
            if error == .noSuchFileOrDirectory || error == .notDirectory { throw .fileNotFound(documentURL) }
            throw .notReadable(documentURL, underlying: "open failed: \(error)", errno: error)
        }
        defer { _ = Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = Errno.current
            throw .notReadable(documentURL, underlying: "fstat failed: \(failure)", errno: failure)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .notReadable(documentURL, underlying: "it is \(kindName(info.st_mode)), not a regular file")
        }
        if let refusal = ReadLimits.refusal(forSize: Int64(info.st_size)) { throw .notReadable(documentURL, underlying: refusal) }
        let expected = Int(info.st_size)
        let report = largeFile(Int64(expected))
        do throws(Errno) {
            let data = try readToEnd(descriptor, sizeHint: expected, chunkSize: chunkSize,
                                     progress: report.map { report in { report(Int64($0)) } })
            return (.data(data), DiskIdentity(info))
        } catch {
            throw .notReadable(documentURL, underlying: "read failed: \(error)", errno: error)
        }
    }

    private static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a folder"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFLNK: return "a symbolic link"
        default: return "an item of an unknown kind"
        }
    }
}
