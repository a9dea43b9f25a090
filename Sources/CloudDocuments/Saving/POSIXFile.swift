import Foundation
import Glibc

// Thin throwing wrappers over the POSIX calls used for saving and for reading packages, in the
// manner of apple/swift-system: every result is checked, EINTR is retried where the call may be
// interrupted, and failures become a `SystemCallError` naming the call, the path and errno.
// Internal; callers turn `SystemCallError` into `DocumentError` (see SaveErrorMapping.swift).
// Every function may be called on any thread; none keeps state between calls.

/// A failed system call.
struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `"write"`, or `"write (injected)"` for a test failure.
    var call: String
    /// The path it was applied to.
    var path: String
    /// The error number.
    var code: Int32

    var description: String { "\(call) “\(path)” failed: \(DocumentError.describe(errno: code))" }
}

/// An open file descriptor. Copyable like swift-system's: the owner must call `close()` once.
struct FileDescriptor {
    let rawValue: Int32
    let path: String

    /// Writes all of `bytes`, retrying on EINTR and short writes. Throws on the first failure;
    /// some bytes may have been written by then.
    func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = Glibc.write(rawValue, next, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "write", path: path, code: errno)
            }
            if written == 0 {  // Should not happen for regular files; avoid spinning forever.
                throw SystemCallError(call: "write", path: path, code: EIO)
            }
            next += written
            remaining -= written
        }
    }

    /// Reads the whole file from the current offset to its end.
    func readToEnd(sizeHint: Int) throws(SystemCallError) -> Data {
        var data = Data(capacity: max(sizeHint, 0))
        let chunkSize = 1 << 16
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(rawValue, $0.baseAddress, chunkSize) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "read", path: path, code: errno)
            }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
        }
    }

    /// `fsync(2)`: flushes the file's data and metadata to the disk.
    func sync() throws(SystemCallError) {
        while fsync(rawValue) != 0 {
            if errno == EINTR { continue }
            throw SystemCallError(call: "fsync", path: path, code: errno)
        }
    }

    /// `fchmod(2)`.
    func setPermissions(_ mode: mode_t) throws(SystemCallError) {
        if fchmod(rawValue, mode) != 0 { throw SystemCallError(call: "fchmod", path: path, code: errno) }
    }

    /// `fchown(2)`.
    func setOwner(user: uid_t, group: gid_t) throws(SystemCallError) {
        if fchown(rawValue, user, group) != 0 { throw SystemCallError(call: "fchown", path: path, code: errno) }
    }

    /// `fstat(2)`.
    func status() throws(SystemCallError) -> stat {
        var info = stat()
        if fstat(rawValue, &info) != 0 { throw SystemCallError(call: "fstat", path: path, code: errno) }
        return info
    }

    /// `close(2)`. EINTR is not retried (on Linux the descriptor is closed anyway); other errors
    /// (EIO from a delayed write on a network file system) are reported.
    func close() throws(SystemCallError) {
        if Glibc.close(rawValue) != 0 && errno != EINTR {
            throw SystemCallError(call: "close", path: path, code: errno)
        }
    }
}
