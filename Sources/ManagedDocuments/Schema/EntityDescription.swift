/// One kind of record and its attributes (Core Data's `NSEntityDescription`).
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name: 1 to 64 ASCII letters, digits and `_`, not starting with a digit.
    public var name: String
    public var attributes: [AttributeDescription]

    public init(_ name: String, attributes: [AttributeDescription]) {
        self.name = name
        self.attributes = attributes
    }

    /// The attribute named `name`, if declared.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The unique attribute, if the entity has one.
    public var uniqueAttribute: AttributeDescription? { attributes.first { $0.isUnique } }
}
