import Foundation

// The store file's JSON, written and read by hand: swift-foundation's `Codable` coders spent most
// of a `synchronize()`'s CPU time on the generic machinery (measured with `perf`, see
// Docs/KeyValueStore.md, "Measured"). The format is exactly the one described there (and the one
// `KeyValueStoreValue`'s `Codable` conformance writes for a value): objects with sorted keys,
// strings escaped as JSON requires, numbers in Swift's shortest round-trip form.

/// Writes JSON text into a byte buffer.
struct KeyValueJSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 4096) { bytes.reserveCapacity(capacity) }

    mutating func file(_ file: KeyValueStoreFile) {
        raw("{\"device\":")
        string(file.device)
        raw(",\"entries\":")
        members(file.entries) { $0.entry($1) }
        raw(",\"format\":\(file.format)}")
    }

    mutating func entry(_ entry: KeyValueStoreEntry) {
        if entry.value == nil { raw("{\"deleted\":true,") } else { raw("{") }
        raw("\"device\":")
        string(entry.stamp.device)
        raw(",\"time\":\(entry.stamp.time)")
        if let value = entry.value {
            raw(",\"value\":")
            self.value(value)
        }
        raw("}")
    }

    mutating func value(_ value: KeyValueStoreValue) {
        switch value {
        case .string(let text):
            raw("{\"string\":")
            string(text)
        case .integer(let number): raw("{\"integer\":\(number)")
        case .double(let number):
            raw("{\"double\":")
            floatingPoint(number)
        case .bool(let flag): raw(flag ? "{\"bool\":true" : "{\"bool\":false")
        case .data(let data):
            raw("{\"data\":\"")
            raw(data.base64EncodedString())
            raw("\"")
        case .date(let date):
            raw("{\"date\":")
            floatingPoint(date.timeIntervalSince1970)
        case .array(let elements):
            raw("{\"array\":[")
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            raw("]")
        case .dictionary(let entries):
            raw("{\"dictionary\":")
            members(entries) { $0.value($1) }
        }
        raw("}")
    }

    /// A number, or `"nan"`, `"inf"`, `"-inf"` for the values JSON has no number for (a bare `nan`
    /// would make the whole file unreadable).
    private mutating func floatingPoint(_ number: Double) {
        if number.isNaN {
            raw("\"nan\"")
        } else if number.isInfinite {
            raw(number > 0 ? "\"inf\"" : "\"-inf\"")
        } else {
            raw("\(number)")
        }
    }

    /// A JSON object of `dictionary`'s members, keys in byte order, each value written by `write`.
    private mutating func members<Member>(_ dictionary: [String: Member], _ write: (inout Self, Member) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        for (index, key) in dictionary.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            guard let member = dictionary[key] else { continue }
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(key)
            bytes.append(UInt8(ascii: ":"))
            write(&self, member)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\t`, … or `\u00XX`.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }
}

/// A parsed JSON value (numbers kept as their text, converted where the format says which type).
indirect enum KeyValueJSON {
    case object([String: KeyValueJSON])
    case array([KeyValueJSON])
    case string(String)
    case number(String)
    case bool(Bool)
    case null
}

/// Parses JSON text. Every malformed input throws `Malformed` (never traps); nesting is limited to
/// 512 levels.
struct KeyValueJSONParser {
    struct Malformed: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ data: Data) { bytes = Array(data) }

    /// The single value the text holds (whitespace around it allowed).
    static func parse(_ data: Data) throws(Malformed) -> KeyValueJSON {
        var parser = KeyValueJSONParser(data)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.malformed("text after the value") }
        return value
    }

    private func malformed(_ reason: String) -> Malformed { Malformed(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(Malformed) {
        for byte in literal.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw malformed("expected \(literal)") }
            index += 1
        }
    }

    private mutating func value(depth: Int) throws(Malformed) -> KeyValueJSON {
        guard depth < 512 else { throw malformed("nested too deeply") }
        skipWhitespace()
        guard index < bytes.count else { throw malformed("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: KeyValueJSON] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                let key = try string()
                skipWhitespace()
                try expect(":")
                members[key] = try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw malformed("unexpected end in an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                try expect("}")
                return .object(members)
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [KeyValueJSON] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw malformed("unexpected end in an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                try expect("]")
                return .array(elements)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func number() throws(Malformed) -> String {
        let start = index
        while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
        guard index > start else { throw malformed("expected a value") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func string() throws(Malformed) -> String {
        try expect("\"")
        var result: [UInt8] = []
        while true {
            guard index < bytes.count else { throw malformed("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: result, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw malformed("unterminated escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escaped)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw malformed("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw malformed("invalid \\u escape") }
                    result.append(contentsOf: Array(String(Character(unicode)).utf8))
                default:
                    throw malformed("invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw malformed("control character in a string") }
                result.append(byte)
            }
        }
    }

    private mutating func hex4() throws(Malformed) -> UInt32 {
        guard index + 4 <= bytes.count else { throw malformed("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            index += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw malformed("invalid hex digit")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}

/// Turning parsed JSON into the file's parts; every mismatch throws a reason.
extension KeyValueJSON {
    struct Mismatch: Error { let reason: String }

    func object() throws(Mismatch) -> [String: KeyValueJSON] {
        if case .object(let members) = self { return members }
        throw Mismatch(reason: "expected an object")
    }

    func text() throws(Mismatch) -> String {
        if case .string(let text) = self { return text }
        throw Mismatch(reason: "expected a string")
    }

    func integer() throws(Mismatch) -> Int64 {
        if case .number(let text) = self, let value = Int64(text) { return value }
        throw Mismatch(reason: "expected an integer")
    }

    func double() throws(Mismatch) -> Double {
        if case .number(let text) = self, let value = Double(text) { return value }
        throw Mismatch(reason: "expected a number")
    }

    /// A number, or the text `"nan"`, `"inf"` or `"-inf"` (``KeyValueJSONWriter`` writes those).
    func floatingPoint() throws(Mismatch) -> Double {
        if case .string(let text) = self {
            switch text {
            case "nan": return .nan
            case "inf": return .infinity
            case "-inf": return -.infinity
            default: throw Mismatch(reason: "not a number: \(text)")
            }
        }
        return try double()
    }

    func entry() throws(Mismatch) -> KeyValueStoreEntry {
        let members = try object()
        guard let time = members["time"], let device = members["device"] else { throw Mismatch(reason: "an entry needs time and device") }
        let stamp = KeyValueStoreStamp(time: try time.integer(), device: try device.text())
        if case .bool(true)? = members["deleted"] { return KeyValueStoreEntry(stamp: stamp, value: nil) }
        guard let value = members["value"] else { throw Mismatch(reason: "an entry needs a value or \"deleted\": true") }
        return KeyValueStoreEntry(stamp: stamp, value: try value.storeValue())
    }

    func storeValue() throws(Mismatch) -> KeyValueStoreValue {
        let members = try object()
        guard members.count == 1, let (type, content) = members.first else {
            throw Mismatch(reason: "a value must have exactly one member naming its type")
        }
        switch type {
        case "string": return .string(try content.text())
        case "integer": return .integer(try content.integer())
        case "double": return .double(try content.floatingPoint())
        case "bool":
            guard case .bool(let flag) = content else { throw Mismatch(reason: "expected a Boolean") }
            return .bool(flag)
        case "data":
            guard let data = Data(base64Encoded: try content.text()) else { throw Mismatch(reason: "data is not base64") }
            return .data(data)
        case "date": return .date(Date(timeIntervalSince1970: try content.floatingPoint()))
        case "array":
            guard case .array(let elements) = content else { throw Mismatch(reason: "expected an array") }
            var values: [KeyValueStoreValue] = []
            values.reserveCapacity(elements.count)
            for element in elements { values.append(try element.storeValue()) }
            return .array(values)
        case "dictionary":
            var values: [String: KeyValueStoreValue] = [:]
            for (key, element) in try content.object() { values[key] = try element.storeValue() }
            return .dictionary(values)
        default:
            throw Mismatch(reason: "unknown value type \(type)")
        }
    }
}
