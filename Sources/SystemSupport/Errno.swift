import Glibc

/// An error number (`errno`) as a value, in the manner of swift-system's `Errno`: what a failed
/// system call left in `errno`, kept so it can be thrown, compared and described later.
///
/// Its description is the system's message from `strerror_r`, which, unlike `strerror`, may be
/// called from several threads at once.
package struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: Int32

    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` right now.
    package static var current: Errno { Errno(rawValue: Glibc.errno) }

    package static let interrupted = Errno(rawValue: EINTR)
    package static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    package static let notDirectory = Errno(rawValue: ENOTDIR)
    package static let fileExists = Errno(rawValue: EEXIST)

    /// The system's message, e.g. `"No space left on device"` (`"Unknown error N"` for numbers
    /// the C library does not know). Thread-safe.
    package var message: String {
        var buffer = [CChar](repeating: 0, count: 256)
        // The Glibc module imports the XSI `strerror_r` (returns 0 and fills `buffer`).
        guard strerror_r(rawValue, &buffer, buffer.count) == 0 else { return "Unknown error \(rawValue)" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The message followed by the number: `"No space left on device, errno 28"`.
    package var description: String { "\(message), errno \(rawValue)" }
}

/// Calls `call` — a system call returning -1 (or another negative number) and setting `errno` on
/// failure — and returns its result or the error. `EINTR` (a signal arrived) is retried unless
/// `retryOnInterrupt` is false.
@inline(__always)
package func valueOrErrno<I: FixedWidthInteger>(
    retryOnInterrupt: Bool = true, _ call: () -> I
) -> Result<I, Errno> {
    while true {
        let result = call()
        if result >= 0 { return .success(result) }
        let error = Errno.current
        if retryOnInterrupt && error == .interrupted { continue }
        return .failure(error)
    }
}

/// Calls `call` again for as long as it fails with `EINTR`, and returns its last result
/// (with `errno` as the call left it).
@inline(__always)
package func retryingOnInterrupt<I: FixedWidthInteger>(_ call: () -> I) -> I {
    while true {
        let result = call()
        if result < 0 && Glibc.errno == EINTR { continue }
        return result
    }
}

/// Like ``valueOrErrno(retryOnInterrupt:_:)`` for calls that return a pointer (`nil` on failure).
@inline(__always)
package func pointerOrErrno<P>(retryOnInterrupt: Bool = true, _ call: () -> P?) -> Result<P, Errno> {
    while true {
        if let pointer = call() { return .success(pointer) }
        let error = Errno.current
        if retryOnInterrupt && error == .interrupted { continue }
        return .failure(error)
    }
}
