import Foundation

/// Where an app reads and changes a ``ManagedDocument``'s records (Core Data's
/// `NSManagedObjectContext`, the document's `managedObjectContext`).
///
/// On the main actor, like the document. Every change is applied to the local store at once
/// (inside a transaction the next save commits) and marks the document as having unsaved
/// changes, so autosave saves it; fetches see unsaved changes. Each call holds the store's lock
/// for one SQLite statement or a few (a save or import running at that moment makes it wait
/// that long). Throws ``ManagedStoreError/notOpen`` before the document is open or created.
@MainActor
public final class ManagedObjectContext {
    /// The document, set once by its initializer before the document is shared, never
    /// changed after (so reading it from any isolation is safe).
    nonisolated(unsafe) weak var document: ManagedDocument?

    /// Whether changes imported from other devices are merged into the store as they arrive
    /// (Core Data's name; `true` by default). Set it to `false` to merge only when you call
    /// ``ManagedDocument/importChanges()``, e.g. while a screen must not change under the user.
    public var automaticallyMergesChangesFromParent = true {
        didSet { document?.automaticImports.withLock { $0 = automaticallyMergesChangesFromParent } }
    }

    nonisolated init() {}

    private func store() throws(ManagedStoreError) -> StoreSynchronizer {
        guard let synchronizer = document?.engine.withLock({ $0?.synchronizer }) else { throw .notOpen }
        return synchronizer
    }

    /// Runs the change `body` on the open store, then marks the document changed (one look-up of
    /// the document for both: an insert is a few microseconds, and each look-up a part of it).
    ///
    /// The document is marked changed by the first change after a save (the store had no pending
    /// change before `body`), not by each: the changes that follow it join the same unsaved set,
    /// which the next save writes whole, so the mark it set still stands for them. A save that
    /// committed the store in between leaves no pending change, so the next change marks the
    /// document again (after that save's snapshot: it stays changed).
    private func edit<T>(_ body: (RecordStore) throws(ManagedStoreError) -> T) throws(ManagedStoreError) -> T {
        guard let document else { throw .notOpen }
        // Whether the store had no pending change before (returned, not captured: a captured
        // variable would be a heap box per change).
        var outcome: (first: Bool, result: T)?
        if let synchronizer = openSynchronizer {
            outcome = try synchronizer.withOpenStore { (store: RecordStore) throws(ManagedStoreError) -> (first: Bool, result: T) in
                (!store.hasPendingChanges, try body(store))
            }
        }
        if outcome == nil {
            // The first change, or the document was closed (and maybe opened again) since.
            openSynchronizer = nil
            guard let synchronizer = document.engine.withLock({ $0?.synchronizer }) else { throw .notOpen }
            outcome = try synchronizer.withOpenStore { (store: RecordStore) throws(ManagedStoreError) -> (first: Bool, result: T) in
                (!store.hasPendingChanges, try body(store))
            }
            if outcome != nil { openSynchronizer = synchronizer }
        }
        guard let outcome else { throw .notOpen }
        if outcome.first || !document.hasUnsavedChanges { document.updateChangeCount(.done) }
        return outcome.result
    }

    /// The synchronizer of the store the last change went to, kept so that each change does
    /// not look it up under the document's engine lock (an insert is a couple of microseconds,
    /// the look-up a part of it). Valid while the synchronizer is not stopped, which its
    /// document does when it closes (``StoreSynchronizer/withOpenStore(_:)`` checks it under the
    /// lock the change takes anyway); a change after that looks the document's current one up.
    private var openSynchronizer: StoreSynchronizer?

    /// Inserts a record of `entityName` (the attributes not given take their defaults).
    ///
    /// - Returns: its identifier. For an entity with a unique attribute, the identifier the value
    ///   names: inserting a value that exists updates that record (reviving it if deleted).
    /// - Throws: ``ManagedStoreError/unknownEntity(_:)``, ``ManagedStoreError/unknownAttribute(entity:attribute:)``,
    ///   ``ManagedStoreError/invalidValue(entity:attribute:reason:)``, ``ManagedStoreError/database(_:)``.
    @discardableResult
    public func insert(_ entityName: String, _ values: [String: AttributeValue] = [:]) throws(ManagedStoreError) -> ManagedObjectID {
        try edit { store throws(ManagedStoreError) in try store.insert(entityName, values) }
    }

    /// Sets `values` on the record `id`.
    ///
    /// - Throws: ``ManagedStoreError/recordNotFound(_:)`` (deleted, here or by an import),
    ///   ``ManagedStoreError/uniqueAttributeImmutable(entity:attribute:)``, and what ``insert(_:_:)`` throws.
    public func update(_ id: ManagedObjectID, _ values: [String: AttributeValue]) throws(ManagedStoreError) {
        try edit { store throws(ManagedStoreError) in try store.update(id, values) }
    }

    /// Deletes the record `id` (Core Data's `delete(_:)`).
    ///
    /// - Throws: ``ManagedStoreError/recordNotFound(_:)``, ``ManagedStoreError/database(_:)``.
    public func delete(_ id: ManagedObjectID) throws(ManagedStoreError) {
        try edit { store throws(ManagedStoreError) in try store.delete(id) }
    }

    /// The live records `request` asks for, unsaved changes included.
    ///
    /// - Throws: ``ManagedStoreError/unknownEntity(_:)``, ``ManagedStoreError/unknownAttribute(entity:attribute:)``,
    ///   ``ManagedStoreError/database(_:)``.
    public func fetch(_ request: FetchRequest) throws(ManagedStoreError) -> [ManagedRecord] {
        try store().withStore { store throws(ManagedStoreError) in try store.fetch(request) }
    }

    /// The number of live records of `entityName`.
    public func count(_ entityName: String) throws(ManagedStoreError) -> Int {
        try store().withStore { store throws(ManagedStoreError) in try store.count(entityName) }
    }

    /// The live record `id`, or `nil` when it is not (or no longer) there (Core Data's
    /// `existingObject(with:)`, without the throw for a missing one).
    public func existingRecord(with id: ManagedObjectID) throws(ManagedStoreError) -> ManagedRecord? {
        try store().withStore { store throws(ManagedStoreError) -> ManagedRecord? in
            guard let registers = try store.registers(of: id), registers[RecordChange.existence]?.value == .bool(true) else { return nil }
            let entity = try store.entity(id.entity)
            var values: [String: AttributeValue] = [:]
            for attribute in entity.attributes { values[attribute.name] = registers[attribute.name]?.value ?? .null }
            return ManagedRecord(objectID: id, values: values)
        }
    }

    /// Whether there are changes not yet saved (local edits, or imports waiting for the save).
    public var hasChanges: Bool { (try? store().hasUnsavedChanges) ?? false }
}
