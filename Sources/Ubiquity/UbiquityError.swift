import Foundation
import SystemSupport

/// Why a ubiquity operation failed. Every case says what to do about it.
///
/// ``errno`` gives the system error number of ``moveFailed(source:destination:errno:)``,
/// ``removeFailed(path:errno:)`` and ``itemUnavailable(path:errno:)`` as an `Errno`, and
/// ``underlyingError`` the `CoordinationError` of ``coordinationFailed(path:underlying:)``, so
/// `error.underlyingErrno` and `error.isCoordinationTimeout` answer through a move or a delete.
public enum UbiquityError: Error, Sendable, Equatable, UnderlyingErrorCarrying {
    /// The configuration file or an environment override has a line that cannot be used.
    /// `line` is 0 for an environment variable (named in `path` as `$NAME`).
    case configurationInvalid(path: String, line: Int, reason: String)
    /// The configuration file exists but could not be read.
    case configurationUnreadable(path: String, reason: String)
    /// No ubiquity root is configured (the Linux form of "not signed in to iCloud").
    case notSignedIn
    /// No container identifier was given and none is configured.
    case noContainerIdentifier
    /// The container folder could not be created or is not a folder.
    case containerUnavailable(identifier: String, path: String, reason: String)
    /// Nothing is at `path` (the item to move, evict or download).
    case itemNotFound(path: String)
    /// The item at `path` is not inside any ubiquity container (for eviction, download, or
    /// `setUbiquitous(false, …)` of an item that is not in the cloud).
    case itemNotInContainer(path: String)
    /// `setUbiquitous(true, …)` was given a destination outside every container (Apple: it must
    /// be made from `url(forUbiquityContainerIdentifier:)`).
    case destinationNotInContainer(path: String)
    /// `setUbiquitous(false, …)` was given a destination inside a container (Apple: it must be a
    /// local place).
    case destinationInContainer(path: String)
    /// Something is already at the destination of a move: nothing was moved or replaced.
    case destinationExists(path: String)
    /// The move itself failed with `errno` (for example ENOSPC, EACCES, ENAMETOOLONG); the item
    /// is still at `source`.
    case moveFailed(source: String, destination: String, errno: Errno)
    /// The coordinated access for a move or a delete could not be had (cancelled, timed out, a
    /// presenter refused); `underlying` is the coordination's error. Nothing was moved or deleted.
    case coordinationFailed(path: String, underlying: CoordinationError)
    /// A name given for an item in a documents folder or a container's data scope cannot be used:
    /// empty, `.` or `..` as a component, a NUL byte, a component over 255 bytes, an absolute
    /// path, or (in the data scope) `Documents`, which is the documents scope. Nothing was touched.
    case invalidName(name: String, reason: String)
    /// Removing the item failed with `errno` (EACCES, EPERM, EBUSY, EROFS, …). A folder may have
    /// lost part of its contents: what could not be removed is still there.
    case removeFailed(path: String, errno: Errno)
    /// The item's status could not be read (`stat` failed with `errno`, for example EACCES on a
    /// folder on the way).
    case itemUnavailable(path: String, errno: Errno)
    /// The provider keeping the container in sync (named by `provider`) keeps every item fully
    /// local: it has no placeholders, so nothing can be evicted or downloaded on request.
    case providerDoesNotSupportPlaceholders(provider: String)
    /// The placeholder at `path` (what stays of an evicted item, ``ItemPlaceholder``) cannot be
    /// used, for `reason`; the item is still on the server: download it again or remove the file.
    case placeholderInvalid(path: String, reason: String)
    /// The placeholder at `path` could not be written (full or read-only disk): the item was not
    /// evicted and nothing changed.
    case placeholderWriteFailed(path: String, errno: Errno)
    /// The item at `path` was not evicted, for `reason` (not uploaded yet, unsaved changes,
    /// unresolved conflicts, no sync agent running, …); nothing changed.
    case evictionRefused(path: String, reason: String)
}

extension UbiquityError {
    /// The system error number of ``moveFailed(source:destination:errno:)``,
    /// ``removeFailed(path:errno:)`` and ``itemUnavailable(path:errno:)``; `nil` for the other
    /// cases (``coordinationFailed(path:underlying:)``'s is its underlying error's).
    public var errno: Errno? {
        switch self {
        case .moveFailed(_, _, let code), .removeFailed(_, let code), .itemUnavailable(_, let code),
             .placeholderWriteFailed(_, let code):
            return code
        default: return nil
        }
    }

    /// The coordination's error of ``coordinationFailed(path:underlying:)``; `nil` for the other
    /// cases.
    public var underlyingError: (any Error)? {
        if case .coordinationFailed(_, let underlying) = self { return underlying }
        return nil
    }
}

extension UbiquityError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case let .configurationInvalid(path, line, reason):
            return line > 0 ? "\(path), line \(line): \(reason)." : "\(path): \(reason)."
        case let .configurationUnreadable(path, reason):
            return "The ubiquity configuration \(path) could not be read: \(reason)."
        case .notSignedIn:
            return "No ubiquity root is configured: set `root = /path` in ~/.config/clouddocuments/ubiquity.conf or CLOUDDOCUMENTS_UBIQUITY_ROOT."
        case .noContainerIdentifier:
            return "No container identifier was given and none is configured: add `container = IDENTIFIER` to the ubiquity configuration or set CLOUDDOCUMENTS_UBIQUITY_CONTAINERS."
        case let .containerUnavailable(identifier, path, reason):
            return "The ubiquity container \(identifier) at \(path) is unavailable: \(reason)."
        case let .itemNotFound(path):
            return "There is no item at \(path)."
        case let .itemNotInContainer(path):
            return "\(path) is not inside a ubiquity container; only items in a container are in the cloud."
        case let .destinationNotInContainer(path):
            return "\(path) is not inside a ubiquity container: to move an item to the cloud, make the destination from the container's URL (url(forUbiquityContainerIdentifier:))."
        case let .destinationInContainer(path):
            return "\(path) is inside a ubiquity container: to move an item out of the cloud, give a destination outside every container."
        case let .destinationExists(path):
            return "An item named \((path as NSString).lastPathComponent) already exists at \(path); choose another name or remove it first. Nothing was moved."
        case let .moveFailed(source, destination, code):
            return "Could not move \(source) to \(destination): \(code.message) (errno \(code.rawValue)). The item was not moved."
        case let .coordinationFailed(path, underlying):
            return "Could not coordinate access to \(path): \(underlying.description)"
        case let .invalidName(name, reason):
            return "“\(name)” cannot name an item here: \(reason)."
        case let .removeFailed(path, code):
            return "Could not remove \(path): \(code.message) (errno \(code.rawValue))."
        case let .itemUnavailable(path, code):
            return "Could not read the status of \(path): \(code.message) (errno \(code.rawValue))."
        case let .providerDoesNotSupportPlaceholders(provider):
            return "The container is kept in sync by \(provider), which keeps every item fully downloaded: there are no placeholders to download or evict."
        case let .placeholderInvalid(path, reason):
            return "The placeholder \(path) cannot be used: \(reason)."
        case let .evictionRefused(path, reason):
            return "\(path) was not evicted: \(reason)."
        case let .placeholderWriteFailed(path, code):
            return "Could not write the placeholder \(path): \(code.message) (errno \(code.rawValue)); the item was not evicted."
        }
    }
}
