import Foundation

/// The identity of one record: its entity and its UUID (Core Data's `NSManagedObjectID`). The
/// same on every device. A record of an entity with a unique attribute has a UUID derived from
/// its unique value (``UniqueIdentity``); any other record a random one made at insert.
public struct ManagedObjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let entity: String
    public let uuid: UUID

    public init(entity: String, uuid: UUID) {
        self.entity = entity
        self.uuid = uuid
    }

    /// Hashes the UUID only (equal identifiers have equal UUIDs; two entities sharing a UUID are
    /// still told apart by `==`): imports hash every identifier they touch, and hashing the
    /// entity's name too was a tenth of an import.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(uuid)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.entity != rhs.entity ? lhs.entity < rhs.entity : lhs.uuid.uuidString < rhs.uuid.uuidString
    }

    /// `Entity/UUID`, e.g. `Task/6F1C…`.
    public var description: String { "\(entity)/\(uuid.uuidString)" }

    /// Parses ``description``; `nil` when `text` is not `Entity/UUID`.
    public init?(_ text: String) {
        guard let slash = text.lastIndex(of: "/"), let uuid = UUID(uuidString: String(text[text.index(after: slash)...])) else {
            return nil
        }
        self.init(entity: String(text[..<slash]), uuid: uuid)
    }
}
