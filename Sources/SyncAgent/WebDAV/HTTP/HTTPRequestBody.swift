import Foundation
import Glibc
import SystemSupport

/// The body of one request as the plain client sends it: none, bytes in memory, or a local file
/// opened once (so a retry re-reads the same file) and sent in large pieces with `pread` and
/// `send` — never the whole file in memory. Not `sendfile(2)`: it raises `SIGPIPE` when the server
/// closes the connection, which would kill a process that does not ignore that signal, while
/// `send` takes `MSG_NOSIGNAL`; on loopback a 256 KiB `pread`/`send` loop runs at several GB/s,
/// far above what a WebDAV server writes.
///
/// A file that changes while it is sent (size, times) is not sent whole: the request fails with
/// ``HTTPFailure/localFile(_:_:)`` (`ESTALE`) before its last piece goes out.
///
/// Used by one exchange's thread; closes its file when released.
final class HTTPRequestBody {
    enum Source {
        case none
        case data(Data)
        case file(descriptor: Int32, path: String, length: Int64)
    }

    let source: Source
    /// The size of one piece read from a file.
    static let pieceSize = 256 * 1024

    /// Opens the body of `body` (the file for reading). Throws ``HTTPFailure/localFile(_:_:)``
    /// when the file cannot be opened or is not a regular file.
    init(_ body: WebDAVTransport.Body) throws(HTTPFailure) {
        switch body {
        case .none: source = .none
        case .data(let data): source = .data(data)
        case .file(let url):
            let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .localFile(Errno(rawValue: errno), url.path) }
            var status = stat()
            guard fstat(descriptor, &status) == 0 else {
                let failure = Errno(rawValue: errno)
                close(descriptor)
                throw .localFile(failure, url.path)
            }
            guard (status.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                throw .localFile(Errno(rawValue: EISDIR), url.path)
            }
            source = .file(descriptor: descriptor, path: url.path, length: Int64(status.st_size))
        }
    }

    deinit {
        if case .file(let descriptor, _, _) = source { close(descriptor) }
    }

    /// The `Content-Length` to announce (`nil`: no body).
    var length: Int64? {
        switch source {
        case .none: nil
        case .data(let data): Int64(data.count)
        case .file(_, _, let length): length
        }
    }

    /// Sends `head` and then the body on `connection`, reporting progress (`sent`, of `total`)
    /// after each piece. Returns ``HTTPConnection/WriteOutcome/answerArrived`` when the server
    /// answered before all was sent (the rest is not sent). A file that ends before its announced
    /// length is ``HTTPFailure/localFile(_:_:)``.
    func send(head: [UInt8], on connection: HTTPConnection, limits: HTTPWaitLimits,
              progress: (Int64, Int64) -> Void) throws(HTTPFailure) -> HTTPConnection.WriteOutcome {
        switch source {
        case .none:
            return try connection.write(head, limits: limits)
        case .data(let data):
            // One write for a small body (a PROPFIND's XML): one packet with TCP_NODELAY.
            var together = head
            together.append(contentsOf: data)
            let outcome = try connection.write(together, limits: limits)
            if outcome == .written { progress(Int64(data.count), Int64(data.count)) }
            return outcome
        case .file(let descriptor, let path, let length):
            // A file rewritten in place while it is read would go out torn: its status is taken
            // before the first piece is read and again after the last one is, and a change ends
            // the request before that piece is sent (the connection is closed; a server lands a
            // PUT only whole). See ``isUnchanged(_:since:)``.
            var opened = stat()
            guard fstat(descriptor, &opened) == 0 else { throw .localFile(Errno(rawValue: errno), path) }
            guard Int64(opened.st_size) == length else { throw .localFile(Errno(rawValue: ESTALE), path) }
            let headOutcome = try connection.write(head, limits: limits)
            guard headOutcome == .written else { return headOutcome }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pieceSize, alignment: 16)
            defer { buffer.deallocate() }
            guard let base = buffer.baseAddress else { return .written }
            var offset: Int64 = 0
            while offset < length {
                try limits.check()
                let wanted = Int(min(Int64(buffer.count), length - offset))
                let count = pread(descriptor, base, wanted, off_t(offset))
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .localFile(Errno(rawValue: errno), path)
                }
                // The file became shorter while it was sent.
                guard count > 0 else { throw .localFile(nil, path) }
                if offset + Int64(count) >= length, !Self.isUnchanged(descriptor, since: opened) {
                    throw .localFile(Errno(rawValue: ESTALE), path)
                }
                let outcome = try connection.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]), limits: limits)
                guard outcome == .written else { return outcome }
                offset += Int64(count)
                progress(offset, length)
            }
            return .written
        }
    }

    /// Whether the open file has the size, times and identity it had in `opened` (a write to it
    /// changes its ctime, a distinct one on Linux 6.13+ multigrain timestamps once it was read).
    static func isUnchanged(_ descriptor: Int32, since opened: stat) -> Bool {
        var now = stat()
        guard fstat(descriptor, &now) == 0 else { return false }
        return now.st_size == opened.st_size && now.st_ino == opened.st_ino && now.st_dev == opened.st_dev
            && now.st_mtim.tv_sec == opened.st_mtim.tv_sec && now.st_mtim.tv_nsec == opened.st_mtim.tv_nsec
            && now.st_ctim.tv_sec == opened.st_ctim.tv_sec && now.st_ctim.tv_nsec == opened.st_ctim.tv_nsec
    }
}
