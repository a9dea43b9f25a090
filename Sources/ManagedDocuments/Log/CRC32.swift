/// CRC-32 (IEEE 802.3, the polynomial of zlib, PNG and gzip), the checksum that ends every
/// change log and baseline: a truncated or damaged file fails it.
///
/// Slice-by-8 (eight bytes per step through eight tables): a 10,000-change log is about a
/// megabyte, which the byte-at-a-time loop took several milliseconds over — a tenth of a save.
enum CRC32 {
    /// `tables[k][b]`: the CRC of byte `b` followed by `k` zero bytes.
    private static let tables: [[UInt32]] = {
        var first = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            first[index] = value
        }
        var tables = [first]
        for _ in 1..<8 {
            let previous = tables[tables.count - 1]
            tables.append((0..<256).map { previous[$0] >> 8 ^ first[Int(previous[$0] & 0xFF)] })
        }
        return tables
    }()

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        finish(update(start, bytes))
    }

    /// The state a checksum starts from (fed with ``update(_:_:)``, ended with ``finish(_:)``):
    /// a file written in several pieces is checked as one run of bytes without joining them.
    static let start: UInt32 = 0xFFFF_FFFF

    /// The checksum of a run of bytes, from its running state.
    static func finish(_ state: UInt32) -> UInt32 { state ^ 0xFFFF_FFFF }

    /// `state` carried on over `bytes` (the next piece of the run).
    static func update(_ state: UInt32, _ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { update(state, $0) }
    }

    /// `state` carried on over `bytes` (the next piece of the run).
    static func update(_ state: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let t = tables
        return t[0].withUnsafeBufferPointer { t0 in t[1].withUnsafeBufferPointer { t1 in t[2].withUnsafeBufferPointer { t2 in
            t[3].withUnsafeBufferPointer { t3 in t[4].withUnsafeBufferPointer { t4 in t[5].withUnsafeBufferPointer { t5 in
                t[6].withUnsafeBufferPointer { t6 in t[7].withUnsafeBufferPointer { t7 in
                    var crc = state
                    var offset = 0
                    let count = bytes.count
                    while offset + 8 <= count {
                        let low = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) ^ crc
                        let high = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                        crc = t7[Int(low & 0xFF)] ^ t6[Int(low >> 8 & 0xFF)] ^ t5[Int(low >> 16 & 0xFF)] ^ t4[Int(low >> 24)]
                            ^ t3[Int(high & 0xFF)] ^ t2[Int(high >> 8 & 0xFF)] ^ t1[Int(high >> 16 & 0xFF)] ^ t0[Int(high >> 24)]
                        offset += 8
                    }
                    while offset < count {
                        crc = t0[Int((crc ^ UInt32(bytes[offset])) & 0xFF)] ^ (crc >> 8)
                        offset += 1
                    }
                    return crc
                } }
            } } }
        } } }
    }
}
