import Foundation

/// One value of the key-value store: a property-list value, as Apple's
/// `NSUbiquitousKeyValueStore` accepts — a string, a 64-bit integer, a double, a Boolean, bytes,
/// a date, or an array or dictionary (string keys) of these.
///
/// Integers, doubles and Booleans are kept apart (Apple keeps them in one `NSNumber`): a value
/// reads back as the case it was written as; the typed getters of ``KeyValueStore`` convert
/// between them the way Apple's do.
public enum KeyValueStoreValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case data(Data)
    case date(Date)
    case array([KeyValueStoreValue])
    case dictionary([String: KeyValueStoreValue])

    /// The bytes this value counts for against the store's limits (see ``KeyValueStoreLimits``):
    /// a string's UTF-8 bytes, the bytes of data, 8 for an integer, double or date, 1 for a
    /// Boolean, and for an array or dictionary the sum of its elements (and of its keys' UTF-8
    /// bytes). About the size of its binary property-list encoding, without the framing.
    public var size: Int {
        switch self {
        case .string(let string): string.utf8.count
        case .integer, .double, .date: 8
        case .bool: 1
        case .data(let data): data.count
        case .array(let elements): elements.reduce(0) { $0 + $1.size }
        case .dictionary(let entries): entries.reduce(0) { $0 + $1.key.utf8.count + $1.value.size }
        }
    }

    /// The name of the case, as `clouddocs kv` and error messages print it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .bool: "bool"
        case .data: "data"
        case .date: "date"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }
}

extension KeyValueStoreValue {
    /// The value for a Foundation object or Swift value of a property-list type: `String` /
    /// `NSString`, any integer type, `Double` / `Float`, `Bool`, `NSNumber` (a Boolean one becomes
    /// `.bool`, a floating-point one `.double`, others `.integer`), `Data` / `NSData`, `Date` /
    /// `NSDate`, arrays of these and dictionaries with string keys.
    ///
    /// - Throws: ``KeyValueStoreError/notPropertyList(key:type:)`` naming the first value of
    ///   another type (`key` is filled in by the caller).
    public init(propertyList object: Any) throws(KeyValueStoreError) {
        // Foundation objects first, by their dynamic type: on Linux a native `Int` or `Bool` also
        // casts to `NSNumber`, and an `NSNumber` 1 also casts to `Bool`, so `as?` alone cannot
        // tell an integer from a Boolean.
        if type(of: object) is NSNumber.Type, let number = object as? NSNumber {
            self = Self.number(number)
            return
        }
        switch object {
        case let value as String: self = .string(value)
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .integer(Int64(value))
        case let value as Int64: self = .integer(value)
        case let value as Int32: self = .integer(Int64(value))
        case let value as Int16: self = .integer(Int64(value))
        case let value as Int8: self = .integer(Int64(value))
        case let value as UInt8: self = .integer(Int64(value))
        case let value as UInt16: self = .integer(Int64(value))
        case let value as UInt32: self = .integer(Int64(value))
        case let value as UInt:
            guard let fitting = Int64(exactly: value) else { throw .notPropertyList(key: "", type: "UInt \(value) (over Int64.max)") }
            self = .integer(fitting)
        case let value as UInt64:
            guard let fitting = Int64(exactly: value) else { throw .notPropertyList(key: "", type: "UInt64 \(value) (over Int64.max)") }
            self = .integer(fitting)
        case let value as Double: self = .double(value)
        case let value as Float: self = .double(Double(value))
        case let value as Data: self = .data(value)
        case let value as Date: self = .date(value)
        case let value as [String: Any]:
            var entries: [String: KeyValueStoreValue] = [:]
            for (key, element) in value { entries[key] = try KeyValueStoreValue(propertyList: element) }
            self = .dictionary(entries)
        case let value as [Any]:
            var elements: [KeyValueStoreValue] = []
            elements.reserveCapacity(value.count)
            for element in value { elements.append(try KeyValueStoreValue(propertyList: element)) }
            self = .array(elements)
        case let value as NSString: self = .string(value as String)
        case let value as NSData: self = .data(value as Data)
        case let value as NSDate: self = .date(value as Date)
        case let value as NSDictionary:
            var entries: [String: KeyValueStoreValue] = [:]
            for (key, element) in value {
                guard let key = key as? String else {
                    throw .notPropertyList(key: "", type: "dictionary with a \(type(of: key)) key")
                }
                entries[key] = try KeyValueStoreValue(propertyList: element)
            }
            self = .dictionary(entries)
        case let value as NSArray:
            var elements: [KeyValueStoreValue] = []
            for element in value { elements.append(try KeyValueStoreValue(propertyList: element)) }
            self = .array(elements)
        default:
            throw .notPropertyList(key: "", type: String(describing: type(of: object)))
        }
    }

    private static func number(_ number: NSNumber) -> KeyValueStoreValue {
        // swift-corelibs-foundation gives Boolean NSNumbers the objCType "c" (as Apple's
        // Foundation does), floating-point ones "f" or "d", and unsigned 64-bit ones "Q".
        switch String(cString: number.objCType) {
        case "c", "B": return .bool(number.boolValue)
        case "f", "d": return .double(number.doubleValue)
        case "Q" where number.uint64Value > UInt64(Int64.max): return .double(number.doubleValue)
        default: return .integer(number.int64Value)
        }
    }

    /// The value as Foundation hands property lists out, as Apple's `object(forKey:)` does:
    /// `String`, `NSNumber` (for integers, doubles and Booleans), `Data`, `Date`, `[Any]` and
    /// `[String: Any]`.
    public var propertyList: Any {
        switch self {
        case .string(let value): value
        case .integer(let value): NSNumber(value: value)
        case .double(let value): NSNumber(value: value)
        case .bool(let value): NSNumber(value: value)
        case .data(let value): value
        case .date(let value): value
        case .array(let elements): elements.map(\.propertyList)
        case .dictionary(let entries): entries.mapValues(\.propertyList)
        }
    }
}
