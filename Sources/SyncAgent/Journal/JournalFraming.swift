import Foundation

/// The on-disk frame of one journal record: `length` (UInt32, little-endian), `crc32` of the
/// payload (UInt32, little-endian), then `length` payload bytes (the record as JSON).
/// A frame whose length runs past the end of the file or whose checksum does not match ends the
/// readable part of the file: everything from there on is a torn write and is ignored.
enum JournalFraming {
    /// The largest payload accepted (a bigger length is garbage, not a record).
    static let maximumPayload = 1 << 20
    static let headerSize = 8

    /// The frame of `payload`.
    static func frame(_ payload: Data) -> Data {
        var data = Data(capacity: payload.count + headerSize)
        appendLittleEndian(UInt32(payload.count), to: &data)
        appendLittleEndian(CRC32.checksum(payload), to: &data)
        data.append(payload)
        return data
    }

    /// The payloads of the valid frames at the start of `data`, and the length of that valid
    /// prefix (where a torn or garbled frame begins, or `data.count`).
    static func payloads(in data: Data) -> (payloads: [Data], validLength: Int) {
        var payloads: [Data] = []
        var offset = data.startIndex
        while data.endIndex - offset >= headerSize {
            let length = Int(readLittleEndian(data, at: offset))
            let checksum = readLittleEndian(data, at: offset + 4)
            let start = offset + headerSize
            guard length <= maximumPayload, data.endIndex - start >= length else { break }
            let payload = data.subdata(in: start..<(start + length))
            guard CRC32.checksum(payload) == checksum else { break }
            payloads.append(payload)
            offset = start + length
        }
        return (payloads, offset - data.startIndex)
    }

    private static func appendLittleEndian(_ value: UInt32, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    private static func readLittleEndian(_ data: Data, at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(data[offset + index]) << (8 * index) }
        return value
    }
}

/// CRC-32 (IEEE 802.3, the zlib polynomial), table-driven. Pure; any thread.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = (value & 1) != 0 ? (0xEDB8_8320 ^ (value >> 1)) : (value >> 1) }
        return value
    }

    static func checksum(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
