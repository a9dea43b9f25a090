import Foundation

/// Apple's limits of the iCloud key-value store, checked on every write.
///
/// Sizes count ``KeyValueStoreValue/size`` (UTF-8 bytes of strings, bytes of data, 8 per number
/// or date, 1 per Boolean, summed through arrays and dictionaries) — values only, not keys, as
/// Apple's "1 MB for all values" says: one value of exactly 1 MB fits, and then nothing else
/// does. The limits apply to the merged store (this device's and every other device's keys).
/// Writes made on two devices at once are each checked against what their device had seen, so
/// together they may go over; nothing already stored is ever dropped for it, and later writes
/// that would add keys or bytes are refused until the store is back under its limits.
public enum KeyValueStoreLimits {
    /// Keys are at most 64 bytes of UTF-8.
    public static let maximumKeyLength = 64
    /// At most 1,024 keys.
    public static let maximumKeyCount = 1024
    /// One value is at most 1 MB (1,048,576 bytes).
    public static let maximumValueSize = 1 << 20
    /// All values together are at most 1 MB (1,048,576 bytes).
    public static let maximumTotalSize = 1 << 20
    /// Arrays and dictionaries nest at most 128 deep. Not one of Apple's published limits: the
    /// depth this store's files are read back with (their parser stops at 512 levels of JSON, and a
    /// level of a value takes two), so that one value can never make a device file unreadable.
    public static let maximumNestingDepth = 128

    /// Which limit a write would have gone over.
    public enum Violation: Sendable, Equatable, CustomStringConvertible {
        case valueSize(Int)
        case keyCount(Int)
        case totalSize(Int)
        case nestingDepth(Int)

        public var description: String {
            switch self {
            case .valueSize(let size): "the value is \(size) bytes, over \(maximumValueSize)"
            case .keyCount(let count): "the store would hold \(count) keys, over \(maximumKeyCount)"
            case .totalSize(let size): "the values would total \(size) bytes, over \(maximumTotalSize)"
            case .nestingDepth(let depth): "the value nests arrays and dictionaries \(depth) deep, over \(maximumNestingDepth)"
            }
        }
    }

    /// The limit that writing a value of `newSize` bytes (nil: a removal) for a key whose current
    /// value has `oldSize` bytes (nil: absent) would break, given the store's current `keyCount`
    /// and `totalSize`; `nil` when it may be written. A write that does not make things worse (a
    /// removal, or replacing a value with one no larger) is always allowed.
    /// How deep arrays and dictionaries nest in `value` (0 for a string, number, …), counted
    /// without recursion, so that any depth is measured without running out of stack.
    static func nestingDepth(of value: KeyValueStoreValue) -> Int {
        var deepest = 0
        var pending: [(value: KeyValueStoreValue, depth: Int)] = [(value, 1)]
        while let (value, depth) = pending.popLast() {
            switch value {
            case .array(let elements):
                deepest = max(deepest, depth)
                for element in elements { pending.append((element, depth + 1)) }
            case .dictionary(let entries):
                deepest = max(deepest, depth)
                for element in entries.values { pending.append((element, depth + 1)) }
            default:
                continue
            }
        }
        return deepest
    }

    static func violation(newSize: Int?, oldSize: Int?, keyCount: Int, totalSize: Int) -> Violation? {
        guard let newSize else { return nil }
        if newSize > maximumValueSize { return .valueSize(newSize) }
        let count = keyCount + (oldSize == nil ? 1 : 0)
        if oldSize == nil, count > maximumKeyCount { return .keyCount(count) }
        let total = totalSize - (oldSize ?? 0) + newSize
        if newSize > (oldSize ?? 0), total > maximumTotalSize { return .totalSize(total) }
        return nil
    }
}
