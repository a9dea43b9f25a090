import Foundation

/// The value of one attribute of one record. `null` is the absence of a value (an optional
/// attribute not set, or set to nil).
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case uuid(UUID)

    /// The type of the value, `nil` for ``null``.
    public var type: AttributeType? {
        switch self {
        case .null: nil
        case .string: .string
        case .integer: .integer
        case .double: .double
        case .bool: .bool
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        }
    }

    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    public var integerValue: Int64? { if case .integer(let value) = self { value } else { nil } }
    public var doubleValue: Double? { if case .double(let value) = self { value } else { nil } }
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var dateValue: Date? { if case .date(let value) = self { value } else { nil } }
    public var dataValue: Data? { if case .data(let value) = self { value } else { nil } }
    public var uuidValue: UUID? { if case .uuid(let value) = self { value } else { nil } }

    public var description: String {
        switch self {
        case .null: "nil"
        case .string(let value): "\"\(value)\""
        case .integer(let value): "\(value)"
        case .double(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .date(let value): "\(value.timeIntervalSince1970)s"
        case .data(let value): "<\(value.count) bytes>"
        case .uuid(let value): value.uuidString
        }
    }

    /// The value as SQLite stores it.
    var sqliteValue: SQLiteValue {
        switch self {
        case .null: .null
        case .string(let value): .text(value)
        case .integer(let value): .integer(value)
        case .double(let value): .real(value)
        case .bool(let value): .integer(value ? 1 : 0)
        case .date(let value): .real(value.timeIntervalSince1970)
        case .data(let value): .blob(value)
        case .uuid(let value): .text(value.uuidString)
        }
    }

    /// Reads a stored value back as `type`; a stored value of another class (a damaged or
    /// hand-edited database) reads as ``null`` rather than trapping.
    init(_ stored: SQLiteValue, as type: AttributeType) {
        switch (type, stored) {
        case (_, .null): self = .null
        case (.string, .text(let text)): self = .string(text)
        case (.integer, .integer(let number)): self = .integer(number)
        case (.double, .real(let number)): self = .double(number)
        case (.double, .integer(let number)): self = .double(Double(number))
        case (.bool, .integer(let number)): self = .bool(number != 0)
        case (.date, .real(let seconds)): self = .date(Date(timeIntervalSince1970: seconds))
        case (.date, .integer(let seconds)): self = .date(Date(timeIntervalSince1970: Double(seconds)))
        case (.data, .blob(let bytes)): self = .data(bytes)
        case (.uuid, .text(let text)): self = UUID(uuidString: text).map { .uuid($0) } ?? .null
        default: self = .null
        }
    }
}

extension AttributeValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
}
