/// What an import changed, as the app sees it: the records that appeared, changed or
/// disappeared (carried by the import notification, see ``ManagedDocument``).
public struct ImportSummary: Sendable, Hashable {
    /// Records that did not exist here before the import.
    public var inserted: Set<ManagedObjectID> = []
    /// Records that existed and had attributes changed.
    public var updated: Set<ManagedObjectID> = []
    /// Records that existed and were deleted.
    public var deleted: Set<ManagedObjectID> = []

    /// An empty summary.
    public init() {}

    /// Whether the import changed nothing the app sees.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// Folds the effects of several changes to the same records into one ``ImportSummary``: a
/// record inserted then updated in one import is inserted; inserted then deleted is nothing;
/// deleted then inserted again is updated.
///
/// Kept as the three sets themselves (a record's first effect is one set insertion; the folding
/// looks in the other sets only when they hold something), not as a table of states turned
/// into sets at the end: an import of 10,000 new records hashed each identifier twice.
struct ImportEffects {
    private var folded = ImportSummary()

    /// Room for `count` records in the set most imports fill (new records).
    mutating func reserve(_ count: Int) { folded.inserted.reserveCapacity(count) }

    mutating func record(_ effect: RecordStore.Effect, for id: ManagedObjectID) {
        switch effect {
        case .none: return
        case .inserted:
            // Deleted earlier in this import (it was live before): then only updated.
            if !folded.deleted.isEmpty, folded.deleted.remove(id) != nil {
                folded.updated.insert(id)
            } else {
                folded.inserted.insert(id)
            }
        case .updated:
            // Inserted earlier in this import: still inserted.
            if folded.inserted.isEmpty || !folded.inserted.contains(id) { folded.updated.insert(id) }
        case .deleted:
            // Inserted earlier in this import: nothing; updated earlier: deleted.
            if !folded.inserted.isEmpty, folded.inserted.remove(id) != nil { return }
            if !folded.updated.isEmpty { folded.updated.remove(id) }
            folded.deleted.insert(id)
        }
    }

    var summary: ImportSummary { folded }
}
