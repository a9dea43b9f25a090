import Foundation
import Glibc
import SystemSupport

// Thin throwing wrappers over the POSIX calls used for saving and for reading packages, in the
// manner of apple/swift-system: every result is checked, EINTR is retried where the call may be
// interrupted (SystemSupport's `valueOrErrno`), and failures become a `SystemCallError` naming the
// call, the path and errno. Paths are lossless path strings (SystemSupport's `PathBytes`): a name
// that is not valid UTF-8 reaches the kernel byte for byte.
// Internal; callers turn `SystemCallError` into `DocumentError` (see SaveErrorMapping.swift).
// Every function may be called on any thread; none keeps state between calls.

/// A failed system call.
struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `"write"`, or `"write (injected)"` for a test failure.
    var call: String
    /// The path it was applied to (a lossless path string).
    var path: String
    /// The error number.
    var errno: Errno

    /// The error number, as a C `int`.
    var code: Int32 { errno.rawValue }

    init(call: String, path: String, errno: Errno) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    init(call: String, path: String, code: Int32) {
        self.init(call: call, path: path, errno: Errno(rawValue: code))
    }

    var description: String { "\(call) “\(PathBytes.display(path))” failed: \(errno)" }
}

extension Result where Failure == Errno {
    /// The value, or a `SystemCallError` naming `call` and `path`.
    func get(call: String, path: String) throws(SystemCallError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let error): throw SystemCallError(call: call, path: path, errno: error)
        }
    }
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
            let written = try valueOrErrno { Glibc.write(rawValue, next, remaining) }.get(call: "write", path: path)
            if written == 0 {  // Should not happen for regular files; avoid spinning forever.
                throw SystemCallError(call: "write", path: path, code: EIO)
            }
            next += written
            remaining -= written
        }
    }

    /// Reads the whole file from the current offset to its end.
    func readToEnd(sizeHint: Int) throws(SystemCallError) -> Data {
        do {
            return try SystemSupport.readToEnd(rawValue, sizeHint: sizeHint)
        } catch {
            throw SystemCallError(call: "read", path: path, errno: error)
        }
    }

    /// `fsync(2)`: flushes the file's data and metadata to the disk.
    func sync() throws(SystemCallError) {
        _ = try valueOrErrno { fsync(rawValue) }.get(call: "fsync", path: path)
    }

    /// `fchmod(2)`.
    func setPermissions(_ mode: mode_t) throws(SystemCallError) {
        _ = try valueOrErrno { fchmod(rawValue, mode) }.get(call: "fchmod", path: path)
    }

    /// `fchown(2)`.
    func setOwner(user: uid_t, group: gid_t) throws(SystemCallError) {
        _ = try valueOrErrno { fchown(rawValue, user, group) }.get(call: "fchown", path: path)
    }

    /// `fstat(2)`.
    func status() throws(SystemCallError) -> stat {
        var info = stat()
        _ = try valueOrErrno { fstat(rawValue, &info) }.get(call: "fstat", path: path)
        return info
    }

    /// `close(2)`. EINTR is not retried (on Linux the descriptor is closed anyway); other errors
    /// (EIO from a delayed write on a network file system) are reported.
    func close() throws(SystemCallError) {
        if case .failure(let error) = valueOrErrno(retryOnInterrupt: false, { Glibc.close(rawValue) }),
           error != .interrupted {
            throw SystemCallError(call: "close", path: path, errno: error)
        }
    }
}
