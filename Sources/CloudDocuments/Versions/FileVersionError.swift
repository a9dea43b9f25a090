import Foundation
import SystemSupport

/// Why a ``FileVersion`` operation failed. Every case names the item or version it is about.
///
/// ``errno`` gives the system error number of ``storeFailed(path:call:errno:)`` as an `Errno`, and
/// ``underlyingError`` the `CoordinationError` of ``coordinationFailed(_:underlying:)``, so
/// `error.underlyingErrno` and `error.isCoordinationTimeout` answer through a version operation.
public enum FileVersionError: Error, Sendable, Equatable, CustomStringConvertible, UnderlyingErrorCarrying {
    /// Nothing exists at the item's URL (or its folder is missing).
    case itemNotFound(URL)
    /// The item is neither a regular file nor a folder (a device, a socket, …): it has no versions.
    case unsupportedItem(URL)
    /// The contents given to ``FileVersion/addOfItem(at:withContentsOf:options:)`` do not exist or
    /// cannot be read.
    case contentsNotFound(URL)
    /// The operation does not apply to the current version (for example ``FileVersion/remove()``).
    case isCurrentVersion(URL)
    /// The version was removed (by this or another process) since this object was made.
    case versionNotFound(URL)
    /// The coordinated write around the change failed (timed out, cancelled, would deadlock, a
    /// presenter refused); `underlying` is the coordination's error. Nothing was changed.
    case coordinationFailed(URL, underlying: CoordinationError)
    /// A system call on the version store or the item failed: `call` and `errno` tell which and
    /// why. The store is left as it was before the operation (no half version is ever visible).
    case storeFailed(path: String, call: String, errno: Errno)

    /// What went wrong and what to do, in one sentence or two.
    public var description: String {
        switch self {
        case .itemNotFound(let url): return "No item at “\(url.path)”."
        case .unsupportedItem(let url): return "“\(url.path)” is neither a file nor a folder; it has no versions."
        case .contentsNotFound(let url): return "The contents for the new version at “\(url.path)” cannot be read."
        case .isCurrentVersion(let url): return "This is the current version of “\(url.path)”; it cannot be removed."
        case .versionNotFound(let url): return "The version at “\(url.path)” no longer exists."
        case .coordinationFailed(let url, let underlying):
            return "Could not coordinate writing “\(url.path)”: \(underlying.description)"
        case .storeFailed(let path, let call, let code):
            // `strerror_r` through `Errno` (`strerror` is not thread-safe).
            return "\(call) on “\(path)” failed: \(code.message) (errno \(code.rawValue))."
        }
    }

    /// The system error number of ``storeFailed(path:call:errno:)``; `nil` for the other cases
    /// (``coordinationFailed(_:underlying:)``'s is its underlying error's).
    public var errno: Errno? {
        if case .storeFailed(_, _, let code) = self { return code }
        return nil
    }

    /// The coordination's error of ``coordinationFailed(_:underlying:)``; `nil` for the other cases.
    public var underlyingError: (any Error)? {
        if case .coordinationFailed(_, let underlying) = self { return underlying }
        return nil
    }

    init(_ error: SystemCallError) {
        self = .storeFailed(path: error.path, call: error.call, errno: error.errno)
    }
}
