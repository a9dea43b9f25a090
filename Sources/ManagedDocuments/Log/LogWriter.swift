import Foundation

/// Appends the primitives of the change-log format (little-endian integers, length-prefixed
/// strings, tagged values) to a byte buffer.
struct LogWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { append(UInt64(value), count: 2) }
    mutating func u32(_ value: UInt32) { append(UInt64(value), count: 4) }
    mutating func u64(_ value: UInt64) { append(value, count: 8) }

    /// The low `count` bytes of `value`, little-endian.
    private mutating func append(_ value: UInt64, count: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[0..<count]))
        }
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

    /// A value: its ``AttributeType`` tag (0 for null), then its payload.
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
}
