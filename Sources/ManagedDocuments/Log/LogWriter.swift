import Foundation

/// Appends the primitives of the change-log format (little-endian integers, length-prefixed
/// strings, tagged values) to a byte buffer.
struct LogWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { append(UInt64(value), count: 2) }
    mutating func u32(_ value: UInt32) { append(UInt64(value), count: 4) }
    mutating func u64(_ value: UInt64) { append(value, count: 8) }

    /// The low `count` bytes of `value`, little-endian: byte by byte (inlined, each a store after
    /// a capacity check; appending a buffer took a generic call per integer, a fifth of a save).
    @inline(__always)
    private mutating func append(_ value: UInt64, count: Int) {
        var shift: UInt64 = 0
        for _ in 0..<count {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
            shift += 8
        }
    }

    /// An unsigned LEB128 varint: 7 bits a byte, the low first, the top bit set on all but the
    /// last (format 2's counts, lengths and name indices: most take one byte).
    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            u32(UInt32(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { bytes += $0 }
    }

    /// A value as format 2 writes it: its ``AttributeType`` tag (0 for null), then its payload,
    /// lengths as varints and integers as zigzag varints (small magnitudes take a byte or two).
    mutating func compactValue(_ value: AttributeValue) {
        switch value {
        case .string(var text):
            u8(AttributeType.string.rawValue)
            text.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        case .integer(let number):
            u8(AttributeType.integer.rawValue)
            varint(UInt64(bitPattern: (number << 1) ^ (number >> 63)))
        case .data(let data):
            u8(AttributeType.data.rawValue)
            varint(UInt64(data.count))
            bytes += data
        default:
            self.value(value)  // the fixed-size payloads are as format 1's
        }
    }

    /// A value: its ``AttributeType`` tag (0 for null), then its payload (format 1; the header's strings).
    mutating func value(_ value: AttributeValue) {
        u8(value.type?.rawValue ?? 0)
        switch value {
        case .null: break
        case .string(let text): string(text)
        case .integer(let number): u64(UInt64(bitPattern: number))
        case .double(let number): u64(number.bitPattern)
        case .bool(let flag): u8(flag ? 1 : 0)
        case .date(let date): u64(date.timeIntervalSince1970.bitPattern)
        case .data(let data):
            u32(UInt32(truncatingIfNeeded: data.count))
            bytes += data
        case .uuid(let id): uuid(id)
        }
    }

    /// Appends what `body` writes through a ``ByteCursor`` into a scratch buffer of `maximum`
    /// bytes (on the stack when small): one capacity check and one copy for a whole change
    /// instead of one check per byte. Returns false, with nothing appended, when `body` wrote
    /// more than `maximum` bytes (a bound computed wrong): the caller then writes the same
    /// bytes through the growing primitives above.
    mutating func appendEncoded(maximum: Int, _ body: (inout ByteCursor) -> Void) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, maximum)) { buffer in
            guard let base = buffer.baseAddress else { return false }
            var cursor = ByteCursor(base: base, capacity: buffer.count)
            body(&cursor)
            guard !cursor.overflowed else { return false }
            bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: cursor.count))
            return true
        }
    }
}

/// Writes the primitives of ``LogWriter`` (the same bytes) through a pointer into a buffer
/// whose size the caller bounded beforehand (``LogWriter/appendEncoded(maximum:_:)``). A write
/// past the capacity is not made and marks the cursor `overflowed` (the bound is computed from
/// the same values, so it never happens; the check keeps a mistake from writing outside the
/// buffer or from losing bytes silently: the writer then falls back to its growing array).
/// Two encoders of the same bytes on purpose: this one for the per-row hot path, `LogWriter`'s
/// for everything else and as the fallback that cannot run out of room.
struct ByteCursor {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0
    /// A write did not fit (and was not made).
    private(set) var overflowed = false

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The most bytes ``compactValue(_:)`` writes for `value` (its tag included).
    static func compactBound(_ value: AttributeValue) -> Int {
        switch value {
        case .string(let text): 11 + text.utf8.count
        case .data(let data): 11 + data.count
        case .uuid: 17
        default: 11
        }
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        guard count < capacity else { overflowed = true; return }
        base[count] = value
        count += 1
    }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            byte(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        byte(UInt8(truncatingIfNeeded: rest))
    }

    mutating func u64(_ value: UInt64) {
        guard count + 8 <= capacity else { overflowed = true; return }
        UnsafeMutableRawPointer(base + count).storeBytes(of: value.littleEndian, as: UInt64.self)
        count += 8
    }

    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        guard count + bytes.count <= capacity else { overflowed = true; return }
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    mutating func uuid(_ value: UUID) {
        withUnsafeBytes(of: value.uuid) { raw($0) }
    }

    /// A value as ``LogWriter/compactValue(_:)`` writes it.
    mutating func compactValue(_ value: AttributeValue) {
        switch value {
        case .null: byte(0)
        case .string(var text):
            byte(AttributeType.string.rawValue)
            text.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                raw(UnsafeRawBufferPointer(utf8))
            }
        case .integer(let number):
            byte(AttributeType.integer.rawValue)
            varint(UInt64(bitPattern: (number << 1) ^ (number >> 63)))
        case .data(let data):
            byte(AttributeType.data.rawValue)
            varint(UInt64(data.count))
            data.withUnsafeBytes { raw($0) }
        case .double(let number):
            byte(AttributeType.double.rawValue)
            u64(number.bitPattern)
        case .bool(let flag):
            byte(AttributeType.bool.rawValue)
            byte(flag ? 1 : 0)
        case .date(let date):
            byte(AttributeType.date.rawValue)
            u64(date.timeIntervalSince1970.bitPattern)
        case .uuid(let id):
            byte(AttributeType.uuid.rawValue)
            uuid(id)
        }
    }
}
