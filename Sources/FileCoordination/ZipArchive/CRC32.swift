/// The CRC-32 that ZIP archives use (IEEE 802.3, reflected polynomial 0xEDB88320), computed
/// while bytes stream past: feed chunks with ``update(_:)``, runs of zero bytes (file holes)
/// with ``updateWithZeros(count:)``, read ``value`` at the end.
struct CRC32 {
    /// The running register (pre-conditioned with all ones, as the algorithm starts).
    private var register: UInt32 = 0xFFFF_FFFF

    /// The checksum of everything fed so far.
    var value: UInt32 { register ^ 0xFFFF_FFFF }

    /// Eight lookup tables for slicing-by-8 (8 × 256 entries): table 0 is the classic bytewise
    /// table, table k advances a byte followed by k zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            tables[index] = value
        }
        for index in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[(slice - 1) * 256 + index]
                tables[slice * 256 + index] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = register
        Self.tables.withUnsafeBufferPointer { table in
            var index = 0
            let count = bytes.count
            while count - index >= 8 {
                let low = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
                let high = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc = table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        register = crc
    }

    mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Feeds `count` zero bytes in O(log count) steps instead of reading them: for zero input the
    /// register is only multiplied by x^(8·count) modulo the polynomial (zlib's `crc32_combine`
    /// arithmetic), so a sparse multi-gigabyte file is checksummed without touching its holes.
    mutating func updateWithZeros(count: UInt64) {
        guard count > 0 else { return }
        register = Self.multiply(Self.powerOfX(8, times: count), register)
    }

    /// a(x)·b(x) modulo the CRC polynomial, both in the reflected bit order the CRC uses.
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var b = b, product: UInt32 = 0
        var mask: UInt32 = 1 << 31
        while mask != 0 {
            if a & mask != 0 { product ^= b }
            mask >>= 1
            b = b & 1 == 1 ? (b >> 1) ^ 0xEDB8_8320 : b >> 1
        }
        return product
    }

    /// x^(2^k) modulo the polynomial, for k = 0..<72 (enough for any 64-bit byte count).
    private static let powersOfTwoOfX: [UInt32] = {
        var powers: [UInt32] = []
        var power: UInt32 = 1 << 30  // x^1
        for _ in 0..<72 {
            powers.append(power)
            power = multiply(power, power)
        }
        return powers
    }()

    /// x^(bits·times) modulo the polynomial, with `bits` a power of two (8 for bytes).
    private static func powerOfX(_ bits: UInt64, times: UInt64) -> UInt32 {
        var result: UInt32 = 1 << 31  // x^0
        var exponent = times
        var k = bits.trailingZeroBitCount
        while exponent != 0, k < powersOfTwoOfX.count {
            if exponent & 1 == 1 { result = multiply(powersOfTwoOfX[k], result) }
            exponent >>= 1
            k += 1
        }
        return result
    }
}
