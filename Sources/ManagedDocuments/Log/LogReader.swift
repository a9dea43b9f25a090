import Foundation

/// Reads the primitives ``LogWriter`` writes, every read bounds-checked: a truncated or damaged
/// file throws ``LogReader/Damaged`` (never reads past the end, never traps).
struct LogReader {
    struct Damaged: Error, Sendable { let reason: String }

    let bytes: [UInt8]
    private(set) var offset: Int
    /// Where reading stops (the checksum and end marker after it are read separately).
    let end: Int

    init(_ bytes: [UInt8], offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = min(bytes.count, max(0, end ?? bytes.count))
    }

    var remaining: Int { end - offset }

    mutating func take(_ count: Int) throws(Damaged) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw Damaged(reason: "it ends early (truncated at byte \(end))") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8() throws(Damaged) -> UInt8 { UInt8(truncatingIfNeeded: try integer(1)) }
    mutating func u16() throws(Damaged) -> UInt16 { UInt16(truncatingIfNeeded: try integer(2)) }
    mutating func u32() throws(Damaged) -> UInt32 { UInt32(truncatingIfNeeded: try integer(4)) }
    mutating func u64() throws(Damaged) -> UInt64 { try integer(8) }

    /// A little-endian integer of `count` bytes (read in place: no slice per integer).
    private mutating func integer(_ count: Int) throws(Damaged) -> UInt64 {
        guard count <= remaining else { throw Damaged(reason: "it ends early (truncated at byte \(end))") }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * index) }
        offset += count
        return value
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits 64 bits.
    mutating func varint() throws(Damaged) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw Damaged(reason: "it ends early (truncated at byte \(end))") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64, shift < 63 || byte <= 1 else { throw Damaged(reason: "a number is too long") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// A varint used as a count, length or index: at most `Int32.max`.
    mutating func count() throws(Damaged) -> Int {
        let value = try varint()
        guard value <= UInt64(Int32.max) else { throw Damaged(reason: "a count is too large") }
        return Int(value)
    }

    /// A UTF-8 string of `count` bytes.
    mutating func string(count: Int) throws(Damaged) -> String {
        // Validated from the buffer itself (the generic slice path looked up type metadata per string).
        let text = try take(count).withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
        guard let text else { throw Damaged(reason: "a string is not UTF-8") }
        return text
    }

    /// A value as format 2 writes it (``LogWriter/compactValue(_:)``).
    mutating func compactValue() throws(Damaged) -> AttributeValue {
        guard offset < end else { throw Damaged(reason: "it ends early (truncated at byte \(end))") }
        switch bytes[offset] {
        case AttributeType.string.rawValue:
            offset += 1
            return .string(try string(count: try count()))
        case AttributeType.integer.rawValue:
            offset += 1
            let zigzag = try varint()
            return .integer(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case AttributeType.data.rawValue:
            offset += 1
            return .data(Data(try take(try count())))
        default:
            return try value()
        }
    }

    mutating func string() throws(Damaged) -> String {
        let count = Int(try u32())
        let utf8 = try take(count)
        guard let text = String(validating: utf8, as: UTF8.self) else { throw Damaged(reason: "a string is not UTF-8") }
        return text
    }

    mutating func uuid() throws(Damaged) -> UUID {
        guard remaining >= 16 else { throw Damaged(reason: "it ends early (truncated at byte \(end))") }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let start = offset
        withUnsafeMutableBytes(of: &uuid) { raw in
            bytes.withUnsafeBytes { source in raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<start + 16])) }
        }
        offset += 16
        return UUID(uuid: uuid)
    }

    mutating func value() throws(Damaged) -> AttributeValue {
        let tag = try u8()
        if tag == 0 { return .null }
        guard let type = AttributeType(rawValue: tag) else { throw Damaged(reason: "unknown value tag \(tag)") }
        switch type {
        case .string: return .string(try string())
        case .integer: return .integer(Int64(bitPattern: try u64()))
        case .double: return .double(Double(bitPattern: try u64()))
        case .bool: return .bool(try u8() != 0)
        case .date: return .date(Date(timeIntervalSince1970: Double(bitPattern: try u64())))
        case .data: return .data(Data(try take(Int(try u32()))))
        case .uuid: return .uuid(try uuid())
        }
    }
}
