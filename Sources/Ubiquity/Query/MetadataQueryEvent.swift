import Foundation

/// What a `MetadataQuery` tells its handler, in this order: `didStartGathering`, zero or more
/// `gatheringProgress`, `didFinishGathering`, then a `didUpdate` for each batch of changes until
/// the query is stopped (Apple's four notifications).
public enum MetadataQueryEvent: Sendable, Hashable {
    /// The initial walk of the scopes began.
    case didStartGathering
    /// Part of the initial results are in (sent at most every 250 ms while gathering).
    case gatheringProgress
    /// The initial results are complete: `results` holds them.
    case didFinishGathering
    /// Results were added, changed or removed since the last event.
    case didUpdate(MetadataQueryUpdate)
}

/// One batch of changes (Apple's `NSMetadataQueryUpdateAddedItemsKey`, `…ChangedItemsKey`,
/// `…RemovedItemsKey`). An item is in at most one of the three lists; each list is in the query's
/// sort order (else in the order the items were first found). A renamed or moved item keeps its
/// `id` and is reported changed, with its new name and folder; a removed item is reported with
/// its last values.
public struct MetadataQueryUpdate: Sendable, Hashable {
    /// Items that became results.
    public var added: [MetadataItem]
    /// Results whose attributes, name or folder changed.
    public var changed: [MetadataItem]
    /// Items that are no longer results, with their last values.
    public var removed: [MetadataItem]

    /// A batch of changes.
    public init(added: [MetadataItem] = [], changed: [MetadataItem] = [], removed: [MetadataItem] = []) {
        self.added = added
        self.changed = changed
        self.removed = removed
    }

    /// Whether the batch has no change.
    public var isEmpty: Bool { added.isEmpty && changed.isEmpty && removed.isEmpty }
}
