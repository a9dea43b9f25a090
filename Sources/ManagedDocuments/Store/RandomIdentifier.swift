import Foundation

/// New random record identifiers (UUID version 4) from the system's random generator
/// (`getrandom`): Foundation's `UUID()` on Linux opens and reads `/dev/urandom` for each one,
/// which was a third of the cost of an insert.
enum RandomIdentifier {
    static func make() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() & ~0xF000 | 0x4000  // version 4
        let low = generator.next() & ~(0xC000_0000_0000_0000 as UInt64) | 0x8000_0000_0000_0000  // RFC 4122 variant
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { raw in
            for index in 0..<8 {
                raw[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * index))
                raw[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * index))
            }
        }
        return UUID(uuid: uuid)
    }
}
