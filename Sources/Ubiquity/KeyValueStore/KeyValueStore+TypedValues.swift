import Foundation

// The typed getters of Apple's `NSUbiquitousKeyValueStore`, with its conversions between numbers,
// Booleans and strings.
extension KeyValueStore {
    /// The string value of `key`; a number or Boolean is converted (`123` → `"123"`, `true` →
    /// `"1"`). `nil` when absent or of another type.
    public func string(forKey key: String) -> String? {
        switch value(forKey: key) {
        case .string(let value): value
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): value ? "1" : "0"
        default: nil
        }
    }

    /// The 64-bit integer value of `key`: `true` is 1 and `false` 0, a double is rounded down
    /// (2.67 → 2), a string holding a number is converted; 0 when absent or not convertible.
    public func longLong(forKey key: String) -> Int64 {
        switch value(forKey: key) {
        case .integer(let value): value
        case .bool(let value): value ? 1 : 0
        case .double(let value): Self.integer(value)
        case .string(let text):
            Int64(text.trimmingCharacters(in: .whitespaces)) ?? Double(text.trimmingCharacters(in: .whitespaces)).map(Self.integer) ?? 0
        default: 0
        }
    }

    /// The double value of `key`: integers and Booleans converted, a string holding a number
    /// converted; 0 when absent or not convertible.
    public func double(forKey key: String) -> Double {
        switch value(forKey: key) {
        case .double(let value): value
        case .integer(let value): Double(value)
        case .bool(let value): value ? 1 : 0
        case .string(let text): Double(text.trimmingCharacters(in: .whitespaces)) ?? 0
        default: 0
        }
    }

    /// The Boolean value of `key`: a non-zero number is `true`, and a string is `true` when it
    /// starts (after spaces) with `Y`, `y`, `T`, `t` or a digit 1–9 (`"true"`, `"YES"`, `"1"`), as
    /// `NSString.boolValue` reads it; `false` when absent or of another type.
    public func bool(forKey key: String) -> Bool {
        switch value(forKey: key) {
        case .bool(let value): value
        case .integer(let value): value != 0
        case .double(let value): value != 0
        case .string(let text):
            text.drop(while: { $0 == " " || $0 == "\t" }).first.map { "YyTt123456789".contains($0) } ?? false
        default: false
        }
    }

    /// The bytes stored for `key`, or `nil` when absent or of another type.
    public func data(forKey key: String) -> Data? {
        if case .data(let value) = value(forKey: key) { return value }
        return nil
    }

    /// The array stored for `key`, or `nil` when absent or of another type.
    public func array(forKey key: String) -> [KeyValueStoreValue]? {
        if case .array(let value) = value(forKey: key) { return value }
        return nil
    }

    /// The dictionary stored for `key`, or `nil` when absent or of another type.
    public func dictionary(forKey key: String) -> [String: KeyValueStoreValue]? {
        if case .dictionary(let value) = value(forKey: key) { return value }
        return nil
    }

    /// `value` rounded down, clamped to the range of `Int64` (0 for NaN).
    private static func integer(_ value: Double) -> Int64 {
        let floored = value.rounded(.down)
        if floored.isNaN { return 0 }
        if floored >= 9.2233720368547758e18 { return .max }
        if floored <= -9.2233720368547758e18 { return .min }
        return Int64(floored)
    }
}
