import Foundation
import SystemSupport

/// Why a coordinated access did not run. Thrown by every ``Coordinator`` call; when one is
/// thrown, the accessor was **not** run and no lock is held.
///
/// ``errno`` gives the system error number of ``lockFailed(path:errno:)`` and
/// ``ioFailed(path:errno:)`` as an ``Errno``; ``underlyingError`` the presenter's error of
/// ``presenterFailed(_:)``. Equatable: two `presenterFailed` are equal when their errors are of
/// the same type and read the same in full.
public enum CoordinationError: Error, Sendable, CustomStringConvertible, LocalizedError, Equatable,
                               UnderlyingErrorCarrying {
    /// ``Coordinator/cancel()`` was called, or the awaiting `Task` was cancelled.
    case cancelled
    /// A wait (for a lock, or for a presenter's answer) lasted longer than ``Coordinator/timeout``.
    case timedOut
    /// The calling thread already holds a conflicting access to the item through another
    /// coordinator, so waiting would never end.
    case wouldDeadlock(URL)
    /// A file presenter answered a request with an error (or refused); `underlying` is its error.
    case presenterFailed(any Error)
    /// The lock directory cannot be used safely; `reason` says why and what to do.
    case lockDirectoryUnusable(path: String, reason: String)
    /// A lock file for the item could not be opened or locked (`errno` given).
    case lockFailed(path: String, errno: Errno)
    /// Reading an item or writing its temporary copy failed (`errno` given): for example the
    /// disk filled up while a `.forUploading` snapshot was written. `path` names the file that
    /// failed; no temporary file is left behind.
    case ioFailed(path: String, errno: Errno)
    /// The intents passed to ``Coordinator/coordinate(with:queue:byAccessor:)`` are not valid
    /// (for example, more than one writing option at once, or no intent at all).
    case invalidRequest(String)
    /// While this coordination waited, other coordinators moved the item (``Coordinator/item(at:didMoveTo:)``)
    /// again and again: each time it locked the item where it had gone, then found it moved once
    /// more. After 8 such moves in a row it gives up rather than chase the item for ever. The URL is
    /// where the item was last seen. Nothing is wrong with the item; trying again later usually works.
    case itemKeptMoving(URL)
    /// The item was evicted (files on demand: only the server has its bytes) and could not be
    /// downloaded for this access: offline, no sync agent running, or the agent refused; `reason`
    /// says which. Nothing was changed; try again once the reason is gone.
    case itemNotDownloaded(URL, reason: String)

    /// What went wrong and, where it helps, what to do about it.
    public var description: String {
        switch self {
        case .cancelled: return "The file coordination was cancelled."
        case .timedOut: return "The file coordination timed out waiting for another reader, writer or presenter."
        case .wouldDeadlock(let url):
            return "Coordinating \(url.path) would deadlock: this thread already holds a conflicting access to it through another coordinator. Reuse that coordinator, or give both the same purposeIdentifier."
        case .presenterFailed(let error):
            // The presenter's own words (an NSError's description, not its dump).
            return "A file presenter refused the access: \((error as? LocalizedError)?.errorDescription ?? error.localizedDescription)"
        case .lockDirectoryUnusable(let path, let reason):
            return "The lock directory \(path) cannot be used: \(reason)"
        case .lockFailed(let path, let code):
            return "Could not lock \(path): \(code.message) (errno \(code.rawValue))."
        case .ioFailed(let path, let code):
            return "Could not read or write \(path): \(code.message) (errno \(code.rawValue))."
        case .invalidRequest(let reason): return "Invalid coordination request: \(reason)"
        case .itemKeptMoving(let url):
            return "The item kept being moved by other coordinators while this coordination waited for it (last seen at \(url.path)); it was not accessed. Try again."
        case .itemNotDownloaded(let url, let reason):
            return "\(url.path) is only in the cloud and could not be downloaded: \(reason)"
        }
    }
    /// The same text as ``description``.
    public var errorDescription: String? { description }

    /// The system error number of ``lockFailed(path:errno:)`` and ``ioFailed(path:errno:)``;
    /// `nil` for the other cases (see ``Swift/Error/underlyingErrno`` for a presenter's).
    public var errno: Errno? {
        switch self {
        case .lockFailed(_, let code), .ioFailed(_, let code): return code
        default: return nil
        }
    }

    /// The presenter's error of ``presenterFailed(_:)``; `nil` for the other cases.
    public var underlyingError: (any Error)? {
        if case .presenterFailed(let error) = self { return error }
        return nil
    }

    /// Equal cases with equal values; two carried presenter errors are equal when they have the same
    /// type and the same `String(reflecting:)` (errors are not `Equatable` in general).
    public static func == (lhs: CoordinationError, rhs: CoordinationError) -> Bool {
        switch (lhs, rhs) {
        case (.cancelled, .cancelled), (.timedOut, .timedOut): return true
        case let (.wouldDeadlock(a), .wouldDeadlock(b)), let (.itemKeptMoving(a), .itemKeptMoving(b)): return a == b
        case let (.presenterFailed(a), .presenterFailed(b)): return errorsAreEqual(a, b)
        case let (.lockDirectoryUnusable(a, r), .lockDirectoryUnusable(b, s)): return a == b && r == s
        case let (.lockFailed(a, x), .lockFailed(b, y)), let (.ioFailed(a, x), .ioFailed(b, y)): return a == b && x == y
        case let (.invalidRequest(a), .invalidRequest(b)): return a == b
        case let (.itemNotDownloaded(a, r), .itemNotDownloaded(b, s)): return a == b && r == s
        default: return false
        }
    }
}
