/// The type of an attribute, declared in code (Core Data's `NSAttributeType`). Each maps to one
/// SQLite storage class and one tag of the change-log format.
public enum AttributeType: UInt8, Sendable, Hashable, CaseIterable {
    case string = 1
    case integer = 2
    case double = 3
    case bool = 4
    /// A point in time, stored as seconds since 1970 (`Date.timeIntervalSince1970`).
    case date = 5
    case data = 6
    case uuid = 7
}
