/// The entities of a store and the version of their declaration (Core Data's
/// `NSManagedObjectModel` with its version).
///
/// Raise ``version`` whenever you add entities or attributes. A store or a change log made by a
/// newer version is refused (``ManagedStoreError/newerSchema(found:supported:)``): an old program
/// cannot know what it would drop. An older store is upgraded in place (new tables and columns).
/// Removing or retyping an attribute is not supported: add a new one instead.
public struct ManagedSchema: Sendable, Hashable {
    public var version: Int
    public var entities: [EntityDescription]

    public init(version: Int, entities: [EntityDescription]) {
        self.version = version
        self.entities = entities
    }

    /// The entity named `name`, if declared.
    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// Checks the declaration: names usable as identifiers, none twice, at most one unique
    /// attribute per entity, defaults of the declared type, a positive version.
    ///
    /// - Throws: ``ManagedStoreError/invalidSchema(_:)`` saying what is wrong.
    public func validate() throws(ManagedStoreError) {
        guard version >= 1 else { throw .invalidSchema("the version is \(version); versions start at 1") }
        var entityNames = Set<String>()
        for entity in entities {
            guard Self.isIdentifier(entity.name) else {
                throw .invalidSchema("the entity name “\(entity.name)” is not 1 to 64 letters, digits and _ (not starting with a digit)")
            }
            guard entityNames.insert(entity.name).inserted else { throw .invalidSchema("the entity “\(entity.name)” is declared twice") }
            var attributeNames = Set<String>()
            for attribute in entity.attributes {
                guard Self.isIdentifier(attribute.name) else {
                    throw .invalidSchema("the attribute name “\(entity.name).\(attribute.name)” is not 1 to 64 letters, digits and _")
                }
                guard attributeNames.insert(attribute.name).inserted else {
                    throw .invalidSchema("the attribute “\(entity.name).\(attribute.name)” is declared twice")
                }
                if let type = attribute.defaultValue.type, type != attribute.type {
                    throw .invalidSchema("the default of “\(entity.name).\(attribute.name)” is not a \(attribute.type)")
                }
                if attribute.defaultValue == .null && !attribute.isOptional && !attribute.isUnique {
                    throw .invalidSchema("“\(entity.name).\(attribute.name)” is not optional and has no default")
                }
            }
            if entity.attributes.filter(\.isUnique).count > 1 {
                throw .invalidSchema("the entity “\(entity.name)” has more than one unique attribute")
            }
        }
    }

    /// Whether `name` can name an entity or attribute (and so a table or column).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 64, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
    }
}
