import Glibc

/// An error number (`errno`) as a value, in the manner of swift-system's `Errno`: what a failed
/// system call left in `errno`, kept so it can be thrown, compared and described later.
///
/// Public, and re-exported by FileCoordination (so by CloudDocuments and Ubiquity too): every
/// public error that carries a system error number offers it as an `Errno` (`error.errno`), and
/// `error.underlyingErrno` finds it whatever layer the error came through:
///
/// ```swift
/// if error.underlyingErrno == .noSpace { /* ask the user to free some space */ }
/// ```
///
/// Its description is the system's message from `strerror_r`, which, unlike `strerror`, may be
/// called from several threads at once.
public struct Errno: RawRepresentable, Error, Hashable, Codable, Sendable, CustomStringConvertible {
    /// The number, as `errno` holds it (`ENOSPC`, `EROFS`, …).
    public var rawValue: Int32

    /// The error with number `rawValue`.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The error with number `rawValue` (as swift-system's `Errno(_:)`).
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` right now.
    package static var current: Errno { Errno(rawValue: Glibc.errno) }

    /// `EPERM`: the operation is not permitted (for example, on an immutable file).
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// `EINTR`: a signal interrupted the call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`: an input/output error (a failing disk, a lost network file system).
    public static let ioError = Errno(rawValue: EIO)
    /// `EBADF`: the descriptor is not open (or not open for this).
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EAGAIN`: the resource is temporarily unavailable; try again.
    public static let resourceTemporarilyUnavailable = Errno(rawValue: EAGAIN)
    /// `ENOMEM`: the system ran out of memory.
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EBUSY`: the device or resource is busy (for example, a mount point).
    public static let resourceBusy = Errno(rawValue: EBUSY)
    /// `EEXIST`: the file exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// `EXDEV`: the two paths are on different file systems (a rename cannot cross them).
    public static let improperLink = Errno(rawValue: EXDEV)
    /// `ENOTDIR`: a component of the path is not a directory.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `EISDIR`: the item is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `EINVAL`: an argument is not valid.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EMFILE`: the process has too many open files.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `EFBIG`: the file would be larger than the file system allows.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// `ENOSPC`: no space left on the device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EROFS`: the file system is mounted read-only.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// `ENAMETOOLONG`: a file name (or the whole path) is too long.
    public static let fileNameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// `ENOTEMPTY`: the directory is not empty.
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    /// `ELOOP`: too many levels of symbolic links.
    public static let tooManySymbolicLinkLevels = Errno(rawValue: ELOOP)
    /// `ETIMEDOUT`: the operation timed out.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// `EDQUOT`: the user's disk quota is exceeded.
    public static let diskQuotaExceeded = Errno(rawValue: EDQUOT)
    /// `ECANCELED`: the operation was cancelled.
    public static let canceled = Errno(rawValue: ECANCELED)

    /// The system's message, e.g. `"No space left on device"` (`"Unknown error N"` for numbers
    /// the C library does not know). Thread-safe.
    public var message: String {
        var buffer = [CChar](repeating: 0, count: 256)
        // The Glibc module imports the XSI `strerror_r` (returns 0 and fills `buffer`).
        guard strerror_r(rawValue, &buffer, buffer.count) == 0 else { return "Unknown error \(rawValue)" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The message followed by the number: `"No space left on device, errno 28"`.
    public var description: String { "\(message), errno \(rawValue)" }
}

/// Calls `call` — a system call returning -1 (or another negative number) and setting `errno` on
/// failure — and returns its result or the error. `EINTR` (a signal arrived) is retried unless
/// `retryOnInterrupt` is false.
///
/// The one EINTR loop of the package: system calls go through it rather than a hand-written
/// `while … errno == EINTR`. `errno` is read here, right after `call` returns — so wrap the call
/// itself, *inside* any `PathBytes.withCString` or `withUnsafeBytes` closure, never around the
/// closure (what runs while a closure returns may change `errno`):
///
/// ```swift
/// let fd = PathBytes.withCString(path) { cPath in valueOrErrno { open(cPath, O_RDONLY) } }
/// ```
///
/// Pass `retryOnInterrupt: false` where an interruption is meant to end the call: `close(2)`
/// (the descriptor is gone whatever it answers), or a lock wait a signal is sent to cut short
/// (`KernelWaitInterrupter`).
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
