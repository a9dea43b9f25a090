import Foundation

// Core Data's names for the options and the import notification of a ubiquitous store, so code
// written for `UIManagedDocument` reads the same with the ManagedDocuments module's
// `ManagedDocument` (Docs/ManagedDocument.md). Plain values: this module does not depend on
// ManagedDocuments (and so on SQLite); ManagedDocuments uses these.

/// The option naming the store in the container (Core Data's `NSPersistentStoreUbiquitousContentNameKey`),
/// a key of `ManagedDocument.persistentStoreOptions`: 1 to 64 letters, digits, `-`, `_` and `.`.
/// Every device that shares the store uses the same name. Without it, the store is local only:
/// saves write no change logs.
public let NSPersistentStoreUbiquitousContentNameKey = "NSPersistentStoreUbiquitousContentNameKey"

/// The option giving the folder the change logs go in (Core Data's `NSPersistentStoreUbiquitousContentURLKey`):
/// a `URL` in the data scope of a ubiquity container (the container's own URL is the usual
/// choice). Without it, the default container of `UbiquityAccount.shared`.
public let NSPersistentStoreUbiquitousContentURLKey = "NSPersistentStoreUbiquitousContentURLKey"

/// `userInfo` keys of ``Foundation/Notification/Name/NSPersistentStoreDidImportUbiquitousContentChanges``
/// (Core Data's names): each a `Set<ManagedObjectID>` of the records inserted, updated or deleted
/// by the import.
public let NSInsertedObjectsKey = "inserted"
/// See ``NSInsertedObjectsKey``: the records the import updated.
public let NSUpdatedObjectsKey = "updated"
/// See ``NSInsertedObjectsKey``: the records the import deleted.
public let NSDeletedObjectsKey = "deleted"

extension Notification.Name {
    /// Posted on the main actor after changes from other devices were imported into a
    /// `ManagedDocument`'s store (Core Data's notification of the same name). `object` is the
    /// document; `userInfo` holds ``NSInsertedObjectsKey``, ``NSUpdatedObjectsKey`` and
    /// ``NSDeletedObjectsKey``. Not posted for an import that changed nothing.
    public static let NSPersistentStoreDidImportUbiquitousContentChanges =
        Notification.Name("NSPersistentStoreDidImportUbiquitousContentChangesNotification")
}
