import Foundation
import SystemSupport

/// Why a ``FileVersion`` operation failed. Every case names the item or version it is about.
public enum FileVersionError: Error, Sendable, Equatable, CustomStringConvertible {
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
    /// presenter refused). `description` is the coordination error's text. Nothing was changed.
    case coordinationFailed(URL, description: String)
    /// A system call on the version store or the item failed: `call` and `errno` tell which and
    /// why. The store is left as it was before the operation (no half version is ever visible).
    case storeFailed(path: String, call: String, errno: Int32)

    /// What went wrong and what to do, in one sentence or two.
    public var description: String {
        switch self {
        case .itemNotFound(let url): return "No item at “\(url.path)”."
        case .unsupportedItem(let url): return "“\(url.path)” is neither a file nor a folder; it has no versions."
        case .contentsNotFound(let url): return "The contents for the new version at “\(url.path)” cannot be read."
        case .isCurrentVersion(let url): return "This is the current version of “\(url.path)”; it cannot be removed."
        case .versionNotFound(let url): return "The version at “\(url.path)” no longer exists."
        case .coordinationFailed(let url, let text): return "Could not coordinate writing “\(url.path)”: \(text)"
        case .storeFailed(let path, let call, let code):
            // `strerror_r` through `Errno` (`strerror` is not thread-safe).
            return "\(call) on “\(path)” failed: \(Errno(rawValue: code).message) (errno \(code))."
        }
    }

    init(_ error: SystemCallError) {
        self = .storeFailed(path: error.path, call: error.call, errno: error.code)
    }
}
