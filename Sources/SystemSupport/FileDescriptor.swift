import Foundation
import Glibc

/// An open file descriptor and the path it was opened with (for errors), in the manner of
/// swift-system's `FileDescriptor`: thin throwing wrappers that check every result, retry EINTR
/// where the call may be interrupted (``valueOrErrno(retryOnInterrupt:_:)``) and throw a
/// ``SystemCallError`` naming the call and the path.
///
/// Copyable like swift-system's: the owner must call ``close()`` once. Any thread; keeps no state
/// between calls.
package struct FileDescriptor {
    package let rawValue: Int32
    /// The path shown in errors (a lossless path string).
    package let path: String

    package init(rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    /// Writes all of `bytes`, retrying on EINTR and short writes. Throws on the first failure;
    /// some bytes may have been written by then.
    package func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
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

    /// Reads the whole file from the current offset to its end (``readToEnd(_:sizeHint:chunkSize:progress:)``).
    package func readToEnd(sizeHint: Int) throws(SystemCallError) -> Data {
        do {
            return try SystemSupport.readToEnd(rawValue, sizeHint: sizeHint)
        } catch {
            throw SystemCallError(call: "read", path: path, errno: error)
        }
    }

    /// `fsync(2)`: flushes the file's data and metadata to the disk.
    package func sync() throws(SystemCallError) {
        _ = try valueOrErrno { fsync(rawValue) }.get(call: "fsync", path: path)
    }

    /// `fchmod(2)`.
    package func setPermissions(_ mode: mode_t) throws(SystemCallError) {
        _ = try valueOrErrno { fchmod(rawValue, mode) }.get(call: "fchmod", path: path)
    }

    /// `fchown(2)`.
    package func setOwner(user: uid_t, group: gid_t) throws(SystemCallError) {
        _ = try valueOrErrno { fchown(rawValue, user, group) }.get(call: "fchown", path: path)
    }

    /// `fstat(2)`.
    package func status() throws(SystemCallError) -> stat {
        var info = stat()
        _ = try valueOrErrno { fstat(rawValue, &info) }.get(call: "fstat", path: path)
        return info
    }

    /// `close(2)`. EINTR is not retried (on Linux the descriptor is closed anyway, and a retry
    /// could close a descriptor another thread just opened); other errors (EIO from a delayed
    /// write on a network file system) are reported.
    package func close() throws(SystemCallError) {
        if case .failure(let error) = valueOrErrno(retryOnInterrupt: false, { Glibc.close(rawValue) }),
           error != .interrupted {
            throw SystemCallError(call: "close", path: path, errno: error)
        }
    }
}
