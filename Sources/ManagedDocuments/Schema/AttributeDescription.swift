/// One attribute of an entity, declared in code (Core Data's `NSAttributeDescription`).
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name: 1 to 64 ASCII letters, digits and `_`, not starting with a digit.
    public var name: String
    public var type: AttributeType
    /// Whether the attribute may be ``AttributeValue/null``.
    public var isOptional: Bool
    /// The value an insert that does not give one sets.
    public var defaultValue: AttributeValue
    /// Whether the attribute identifies its record (Core Data's uniqueness constraint). At most one
    /// per entity. Records inserted on different devices with the same value are one record (see
    /// Docs/ManagedDocument.md, "Unique attributes"); the value cannot change after the insert.
    public var isUnique: Bool

    public init(_ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: AttributeValue = .null,
                unique: Bool = false) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.isUnique = unique
    }
}
