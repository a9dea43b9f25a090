import Foundation

// The managed document's own option, notification and key. Core Data's names for the options and
// the import notification of a ubiquitous store (`NSPersistentStoreUbiquitousContentNameKey`,
// `NSPersistentStoreDidImportUbiquitousContentChanges`, `NSInsertedObjectsKey`, …) come from
// FoundationCompatibility, with Apple's other names (Sources/FoundationCompatibility/CoreDataNames.swift).

/// The option giving this device's identifier (a `String`, 1 to 64 letters, digits, `-`, `_`).
/// Without it, `DeviceIdentifier.current()` (Ubiquity). For tests and tools that act as several
/// devices in one process.
public let ManagedDocumentDeviceIdentifierKey = "ManagedDocumentDeviceIdentifierKey"

/// The `userInfo` key of ``Foundation/Notification/Name/ManagedDocumentImportDidFail``: the
/// ``ManagedStoreError``.
public let ManagedDocumentErrorKey = "error"

extension Notification.Name {
    /// Posted on the main actor, once per problem, when an import or a save could not use or
    /// write something: a damaged or truncated log (skipped, the rest applied), a log of a newer
    /// schema (kept for later), a reset container (the store was republished), a baseline that
    /// could not be written. `object` is the document, `userInfo[ManagedDocumentErrorKey]` the
    /// ``ManagedStoreError``.
    public static let ManagedDocumentImportDidFail = Notification.Name("ManagedDocumentImportDidFailNotification")
}
