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
/// record inserted then updated in one import is inserted; inserted then deleted is nothing.
struct ImportEffects {
    private var states: [ManagedObjectID: (wasLive: Bool, isLive: Bool)] = [:]

    mutating func record(_ effect: RecordStore.Effect, for id: ManagedObjectID) {
        let (before, after): (Bool, Bool)
        switch effect {
        case .none: return
        case .inserted: (before, after) = (false, true)
        case .deleted: (before, after) = (true, false)
        case .updated: (before, after) = (true, true)
        }
        if let known = states[id] { states[id] = (known.wasLive, after) } else { states[id] = (before, after) }
    }

    var summary: ImportSummary {
        var summary = ImportSummary()
        for (id, state) in states {
            switch (state.wasLive, state.isLive) {
            case (false, true): summary.inserted.insert(id)
            case (true, false): summary.deleted.insert(id)
            case (true, true): summary.updated.insert(id)
            case (false, false): break
            }
        }
        return summary
    }
}
