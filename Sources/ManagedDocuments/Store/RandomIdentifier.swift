import Foundation

/// New random record identifiers (UUID version 4) from the system's random generator
/// (`getrandom`): Foundation's `UUID()` on Linux opens and reads `/dev/urandom` for each one,
/// which was a third of the cost of an insert.
package enum RandomIdentifier {
    package static func make() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() & ~0xF000 | 0x4000  // version 4
        return uuid(high: high, low: generator.next())
    }

    /// The UUID whose 16 bytes are `high` then `low` (big-endian), with the RFC 4122 variant bits
    /// set in `low` (the caller sets the version in `high`).
    static func uuid(high: UInt64, low: UInt64) -> UUID {
        let low = low & ~(0xC000_0000_0000_0000 as UInt64) | 0x8000_0000_0000_0000  // RFC 4122 variant
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
