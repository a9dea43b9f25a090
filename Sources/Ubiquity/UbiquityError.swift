import Foundation

/// Why a ubiquity operation failed. Every case says what to do about it.
public enum UbiquityError: Error, Sendable, Equatable {
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
        }
    }
}
