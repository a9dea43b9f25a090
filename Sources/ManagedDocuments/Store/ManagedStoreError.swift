import Foundation
import SystemSupport

/// What went wrong with a managed store, its change logs or its container. Every case says what
/// failed and what to do (`errorDescription`), and keeps what it knows as values.
public enum ManagedStoreError: Error, Sendable, Equatable, LocalizedError {
    /// The schema declared in code is not usable (a programming error, reported at open).
    case invalidSchema(String)
    /// The local store was written by a newer schema than this program declares: the program is
    /// older than the store. Update it; the store is left as it is.
    case newerSchema(found: Int, supported: Int)
    /// SQLite failed (full disk, damaged database, …): see the error's result code.
    case database(SQLiteError)
    /// The entity is not declared in the schema.
    case unknownEntity(String)
    /// The attribute is not declared for the entity.
    case unknownAttribute(entity: String, attribute: String)
    /// The value given for the attribute is not of its declared type, or is nil for a
    /// non-optional attribute.
    case invalidValue(entity: String, attribute: String, reason: String)
    /// No live record has this identifier (never inserted here, or deleted).
    case recordNotFound(UUID)
    /// Unique attributes identify their record and cannot change after the insert.
    case uniqueAttributeImmutable(entity: String, attribute: String)
    /// A change log or baseline could not be used (truncated, damaged, not a log): it was skipped
    /// and the rest applied. It is read again when it changes (the sync tool may still be
    /// writing it).
    case unreadableLog(path: String, reason: String)
    /// A change log or baseline was written by a newer schema: it is kept, not applied, and
    /// applied once this program is updated.
    case logFromNewerSchema(path: String, found: Int, supported: Int)
    /// A log, baseline or folder could not be written.
    case writeFailed(path: String, errno: Errno)
    /// The container (or the store's folder in it) vanished or was emptied after this device
    /// published to it — reset by the user or the sync tool. The local store was republished as a
    /// baseline; nothing local was lost.
    case containerReset(path: String)
    /// No device identifier (see `DeviceIdentifier`), or no usable container.
    case unavailable(reason: String)
    /// The document is not open (open it before using its context).
    case notOpen

    public var errorDescription: String? {
        switch self {
        case .invalidSchema(let reason): "The managed store's schema is not valid: \(reason)."
        case .newerSchema(let found, let supported):
            "The store was written by schema version \(found), newer than this program's \(supported): update the program."
        case .database(let error): error.errorDescription
        case .unknownEntity(let name): "There is no entity “\(name)” in the schema."
        case .unknownAttribute(let entity, let attribute): "The entity “\(entity)” has no attribute “\(attribute)”."
        case .invalidValue(let entity, let attribute, let reason): "Cannot set “\(entity).\(attribute)”: \(reason)."
        case .recordNotFound(let id): "There is no record \(id.uuidString) (it was never inserted here, or was deleted)."
        case .uniqueAttributeImmutable(let entity, let attribute):
            "“\(entity).\(attribute)” is unique: it identifies its record and cannot change after the insert."
        case .unreadableLog(let path, let reason): "The change log \(path) was skipped: \(reason)."
        case .logFromNewerSchema(let path, let found, let supported):
            "The change log \(path) was written by schema version \(found), newer than this program's \(supported): it is kept and applied once the program is updated."
        case .writeFailed(let path, let errno): "Could not write \(path): \(errno.message)."
        case .containerReset(let path):
            "The synced store folder \(path) was emptied or reset; this device's store was published again as a baseline."
        case .unavailable(let reason): "The managed store is unavailable: \(reason)."
        case .notOpen: "The managed document is not open."
        }
    }
}
