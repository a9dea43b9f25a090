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
