import Foundation
import FileCoordination

/// Why the key-value store refused a write or could not synchronize. Every case says what to do.
///
/// ``writeFailed(path:underlying:)`` keeps the error of the failed write (a `DocumentError` from
/// the safe save, a `CoordinationError`) as a value: `error.underlyingErrno == .noSpace` and
/// `error.isCoordinationTimeout` answer through it. Equatable: two `writeFailed` are equal when
/// their paths are and their errors are of the same type and read the same in full.
public enum KeyValueStoreError: Error, Sendable, Equatable, UnderlyingErrorCarrying {
    /// The value (or something inside an array or dictionary value) is not a property-list type.
    case notPropertyList(key: String, type: String)
    /// The key is longer than ``KeyValueStoreLimits/maximumKeyLength`` bytes of UTF-8.
    case keyTooLong(key: String, bytes: Int)
    /// The write would go over one of Apple's limits; nothing was changed. `limit` names it.
    case quotaViolation(key: String, limit: KeyValueStoreLimits.Violation)
    /// No ubiquity container is available (signed out, or the container folder cannot be made):
    /// changes stay in memory in this process.
    case unavailable(reason: String)
    /// A store file cannot be used: unreadable, not a store file, damaged, or written by a newer
    /// version. Another device's unusable file is skipped; this device's own file is left as it
    /// is and the changes stay pending.
    case storeFileUnusable(path: String, reason: String)
    /// Writing this device's file failed (disk full, permissions, a coordination that timed out,
    /// …); `underlying` is the failure. The changes stay pending and the next `synchronize()`
    /// tries again.
    case writeFailed(path: String, underlying: any Error)

    /// Always `nil`: the number of a failed write is its underlying error's (ask
    /// `error.underlyingErrno`).
    public var errno: Errno? { nil }

    /// The error of ``writeFailed(path:underlying:)``; `nil` for the other cases.
    public var underlyingError: (any Error)? {
        if case .writeFailed(_, let underlying) = self { return underlying }
        return nil
    }

    /// Equal cases with equal values; two carried write errors are equal when they have the same
    /// type and the same `String(reflecting:)` (errors are not `Equatable` in general).
    public static func == (lhs: KeyValueStoreError, rhs: KeyValueStoreError) -> Bool {
        switch (lhs, rhs) {
        case let (.notPropertyList(a, x), .notPropertyList(b, y)): return a == b && x == y
        case let (.keyTooLong(a, x), .keyTooLong(b, y)): return a == b && x == y
        case let (.quotaViolation(a, x), .quotaViolation(b, y)): return a == b && x == y
        case let (.unavailable(a), .unavailable(b)): return a == b
        case let (.storeFileUnusable(a, x), .storeFileUnusable(b, y)): return a == b && x == y
        case let (.writeFailed(a, x), .writeFailed(b, y)): return a == b && errorsAreEqual(x, y)
        default: return false
        }
    }
}

extension KeyValueStoreError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case let .notPropertyList(key, type):
            return "The value for “\(key)” is a \(type), which is not a property-list type (string, number, Boolean, data, date, array or dictionary): it was not stored."
        case let .keyTooLong(key, bytes):
            return "The key “\(key)” is \(bytes) bytes of UTF-8, over the limit of \(KeyValueStoreLimits.maximumKeyLength): it was not stored."
        case let .quotaViolation(key, limit):
            return "Storing “\(key)” would go over the key-value store's limit: \(limit). Nothing was changed."
        case let .unavailable(reason):
            return "The key-value store is not backed by a ubiquity container (\(reason)): changes stay in this process."
        case let .storeFileUnusable(path, reason):
            return "The key-value store file \(path) cannot be used: \(reason)."
        case let .writeFailed(path, underlying):
            return "The key-value store file \(path) could not be written: \(Self.reason(underlying)). The changes stay pending."
        }
    }

    /// The text of a failed write's error, without a final period (the sentence goes on).
    private static func reason(_ error: any Error) -> String {
        var text = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
