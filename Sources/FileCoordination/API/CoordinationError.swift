import Foundation

/// Why a coordinated access did not run. Thrown by every ``Coordinator`` call; when one is
/// thrown, the accessor was **not** run and no lock is held.
public enum CoordinationError: Error, Sendable, CustomStringConvertible, LocalizedError {
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
    case lockFailed(path: String, errno: Int32)
    /// Reading an item or writing its temporary copy failed (`errno` given): for example the
    /// disk filled up while a `.forUploading` snapshot was written. `path` names the file that
    /// failed; no temporary file is left behind.
    case ioFailed(path: String, errno: Int32)
    /// The intents passed to ``Coordinator/coordinate(with:queue:byAccessor:)`` are not valid
    /// (for example, more than one writing option at once, or no intent at all).
    case invalidRequest(String)

    /// What went wrong and, where it helps, what to do about it.
    public var description: String {
        switch self {
        case .cancelled: return "The file coordination was cancelled."
        case .timedOut: return "The file coordination timed out waiting for another reader, writer or presenter."
        case .wouldDeadlock(let url):
            return "Coordinating \(url.path) would deadlock: this thread already holds a conflicting access to it through another coordinator. Reuse that coordinator, or give both the same purposeIdentifier."
        case .presenterFailed(let error): return "A file presenter refused the access: \(error)"
        case .lockDirectoryUnusable(let path, let reason):
            return "The lock directory \(path) cannot be used: \(reason)"
        case .lockFailed(let path, let code):
            return "Could not lock \(path): \(String(cString: strerror(code))) (errno \(code))."
        case .ioFailed(let path, let code):
            return "Could not read or write \(path): \(String(cString: strerror(code))) (errno \(code))."
        case .invalidRequest(let reason): return "Invalid coordination request: \(reason)"
        }
    }
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
