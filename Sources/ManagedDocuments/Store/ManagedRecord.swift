/// One fetched record: its identity and the values of its attributes when it was fetched (a
/// snapshot: change it through the context, fetch again to see changes). Core Data's
/// `NSManagedObject`, as a value.
public struct ManagedRecord: Sendable, Hashable, Identifiable {
    public let objectID: ManagedObjectID
    /// Every declared attribute's value (``AttributeValue/null`` when it has none).
    public let values: [String: AttributeValue]

    public var id: ManagedObjectID { objectID }

    /// The value of `attribute`; ``AttributeValue/null`` for an attribute it has no value for.
    public subscript(_ attribute: String) -> AttributeValue { values[attribute] ?? .null }
}
