import Foundation

/// Reads the primitives ``LogWriter`` writes, every read bounds-checked: a truncated or damaged
/// file throws ``LogReader/Damaged`` (never reads past the end, never traps).
struct LogReader {
    struct Damaged: Error, Sendable { let reason: String }

    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) throws(Damaged) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw Damaged(reason: "it ends early (truncated at byte \(bytes.count))") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8() throws(Damaged) -> UInt8 { try take(1).first ?? 0 }
    mutating func u16() throws(Damaged) -> UInt16 { UInt16(truncatingIfNeeded: try integer(2)) }
    mutating func u32() throws(Damaged) -> UInt32 { UInt32(truncatingIfNeeded: try integer(4)) }
    mutating func u64() throws(Damaged) -> UInt64 { try integer(8) }

    private mutating func integer(_ count: Int) throws(Damaged) -> UInt64 {
        var value: UInt64 = 0
        for (index, byte) in try take(count).enumerated() { value |= UInt64(byte) << (8 * index) }
        return value
    }

    mutating func string() throws(Damaged) -> String {
        let count = Int(try u32())
        let utf8 = try take(count)
        guard let text = String(validating: utf8, as: UTF8.self) else { throw Damaged(reason: "a string is not UTF-8") }
        return text
    }

    mutating func uuid() throws(Damaged) -> UUID {
        let raw = Array(try take(16))
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: raw) }
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
