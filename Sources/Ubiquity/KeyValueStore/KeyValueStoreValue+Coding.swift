import Foundation

/// A value in JSON (or any other coder) in the form the store files use — the files themselves are
/// written and read by `KeyValueJSONWriter` and `KeyValueJSONParser`, which produce and accept
/// exactly this: an object with one member named after the case —
/// `{"string": "blue"}`, `{"integer": 42}`, `{"double": 2.5}` (`"nan"`, `"inf"`, `"-inf"` for the
/// values JSON has no number for), `{"bool": true}`, `{"data": "<base64>"}`,
/// `{"date": <seconds since 1970>}` (the same three texts when not finite), `{"array": [...]}`,
/// `{"dictionary": {...}}`.
/// See Docs/KeyValueStore.md, "File format".
extension KeyValueStoreValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case string, integer, double, bool, data, date, array, dictionary
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "a value must have exactly one member naming its type"))
        }
        switch key {
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .integer: self = .integer(try container.decode(Int64.self, forKey: key))
        case .double: self = .double(try Self.decodeFloatingPoint(in: container, forKey: key))
        case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
        case .data:
            let text = try container.decode(String.self, forKey: key)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64")
            }
            self = .data(data)
        case .date: self = .date(Date(timeIntervalSince1970: try Self.decodeFloatingPoint(in: container, forKey: key)))
        case .array: self = .array(try container.decode([KeyValueStoreValue].self, forKey: key))
        case .dictionary: self = .dictionary(try container.decode([String: KeyValueStoreValue].self, forKey: key))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .string(let value): try container.encode(value, forKey: .string)
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .double(let value): try Self.encodeFloatingPoint(value, in: &container, forKey: .double)
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .data(let value): try container.encode(value.base64EncodedString(), forKey: .data)
        case .date(let value): try Self.encodeFloatingPoint(value.timeIntervalSince1970, in: &container, forKey: .date)
        case .array(let value): try container.encode(value, forKey: .array)
        case .dictionary(let value): try container.encode(value, forKey: .dictionary)
        }
    }

    /// A number, or `"nan"`, `"inf"`, `"-inf"` (for doubles and for dates alike).
    private static func decodeFloatingPoint(in container: KeyedDecodingContainer<CodingKeys>, forKey key: CodingKeys) throws -> Double {
        guard let text = try? container.decode(String.self, forKey: key) else { return try container.decode(Double.self, forKey: key) }
        switch text {
        case "nan": return .nan
        case "inf": return .infinity
        case "-inf": return -.infinity
        default: throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a number: \(text)")
        }
    }

    private static func encodeFloatingPoint(_ value: Double, in container: inout KeyedEncodingContainer<CodingKeys>, forKey key: CodingKeys) throws {
        if value.isNaN {
            try container.encode("nan", forKey: key)
        } else if value.isInfinite {
            try container.encode(value > 0 ? "inf" : "-inf", forKey: key)
        } else {
            try container.encode(value, forKey: key)
        }
    }
}
