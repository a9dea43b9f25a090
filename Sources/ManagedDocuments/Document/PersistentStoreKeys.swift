import Foundation

// Core Data's names for the options and notification of a ubiquitous store, so code written for
// `UIManagedDocument` reads the same.

/// The option naming the store in the container (Core Data's `NSPersistentStoreUbiquitousContentNameKey`):
/// 1 to 64 letters, digits, `-`, `_` and `.`. Every device that shares the store uses the same name.
/// Without it, the store is local only: saves write no change logs.
public let NSPersistentStoreUbiquitousContentNameKey = "NSPersistentStoreUbiquitousContentNameKey"

/// The option giving the folder the change logs go in (Core Data's `NSPersistentStoreUbiquitousContentURLKey`):
/// a `URL` in the data scope of a ubiquity container (the container's own URL is the usual
/// choice). Without it, the default container of `UbiquityAccount.shared`.
public let NSPersistentStoreUbiquitousContentURLKey = "NSPersistentStoreUbiquitousContentURLKey"

/// The option giving this device's identifier (a `String`, 1 to 64 letters, digits, `-`, `_`).
/// Without it, `DeviceIdentifier.current()` (Ubiquity). For tests and tools that act as several
/// devices in one process.
public let ManagedDocumentDeviceIdentifierKey = "ManagedDocumentDeviceIdentifierKey"

/// `userInfo` keys of ``Foundation/Notification/Name/NSPersistentStoreDidImportUbiquitousContentChanges``
/// (Core Data's names): each a `Set<ManagedObjectID>`.
public let NSInsertedObjectsKey = "inserted"
public let NSUpdatedObjectsKey = "updated"
public let NSDeletedObjectsKey = "deleted"

/// The `userInfo` key of ``Foundation/Notification/Name/ManagedDocumentImportDidFail``: the
/// ``ManagedStoreError``.
public let ManagedDocumentErrorKey = "error"

extension Notification.Name {
    /// Posted on the main actor after changes from other devices were imported into a
    /// ``ManagedDocument``'s store (Core Data's notification of the same name). `object` is the
    /// document; `userInfo` holds ``NSInsertedObjectsKey``, ``NSUpdatedObjectsKey`` and
    /// ``NSDeletedObjectsKey``. Not posted for an import that changed nothing.
    public static let NSPersistentStoreDidImportUbiquitousContentChanges =
        Notification.Name("NSPersistentStoreDidImportUbiquitousContentChangesNotification")

    /// Posted on the main actor, once per problem, when an import or a save could not use or
    /// write something: a damaged or truncated log (skipped, the rest applied), a log of a newer
    /// schema (kept for later), a reset container (the store was republished), a baseline that
    /// could not be written. `object` is the document, `userInfo[ManagedDocumentErrorKey]` the
    /// ``ManagedStoreError``.
    public static let ManagedDocumentImportDidFail = Notification.Name("ManagedDocumentImportDidFailNotification")
}
