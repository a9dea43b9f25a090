/// What to fetch: the records of one entity that match a predicate, in an order, at most a
/// limit (Core Data's `NSFetchRequest`). Runs as one SQL query on the local store; deleted
/// records are never returned.
public struct FetchRequest: Sendable, Hashable {
    public var entityName: String
    public var predicate: RecordPredicate?
    public var sortDescriptors: [RecordSortDescriptor]
    /// The most records returned; `nil` for all.
    public var fetchLimit: Int?

    public init(entityName: String, predicate: RecordPredicate? = nil, sortDescriptors: [RecordSortDescriptor] = [],
                fetchLimit: Int? = nil) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
    }
}

/// One sort key (Foundation's `NSSortDescriptor` over an attribute). Records equal by every key
/// come in the order of their identifiers, so a fetch's order is the same on every device.
public struct RecordSortDescriptor: Sendable, Hashable {
    public var key: String
    public var ascending: Bool

    public init(key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }
}
