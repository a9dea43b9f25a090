import Glibc

/// A failed system call: which call, on which path, and the `Errno` it left. What the throwing
/// wrappers of ``POSIX`` and ``FileDescriptor`` throw; CloudDocuments turns it into a
/// `DocumentError` (SaveErrorMapping.swift), other modules into their own errors.
package struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `"write"`, or `"write (injected)"` for a test failure.
    package var call: String
    /// The path it was applied to (a lossless path string, see ``PathBytes``).
    package var path: String
    /// The error number.
    package var errno: Errno

    /// The error number, as a C `int`.
    package var code: Int32 { errno.rawValue }

    package init(call: String, path: String, errno: Errno) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    package init(call: String, path: String, code: Int32) {
        self.init(call: call, path: path, errno: Errno(rawValue: code))
    }

    package var description: String { "\(call) “\(PathBytes.display(path))” failed: \(errno)" }
}

extension Result where Failure == Errno {
    /// The value, or a ``SystemCallError`` naming `call` and `path`.
    package func get(call: String, path: String) throws(SystemCallError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let error): throw SystemCallError(call: call, path: path, errno: error)
        }
    }
}
