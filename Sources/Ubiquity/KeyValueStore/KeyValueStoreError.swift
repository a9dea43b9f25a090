import Foundation

/// Why the key-value store refused a write or could not synchronize. Every case says what to do.
public enum KeyValueStoreError: Error, Sendable, Equatable {
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
    /// Writing this device's file failed (disk full, permissions, …); the changes stay pending
    /// and the next `synchronize()` tries again.
    case writeFailed(path: String, reason: String)
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
        case let .writeFailed(path, reason):
            return "The key-value store file \(path) could not be written: \(reason). The changes stay pending."
        }
    }
}
