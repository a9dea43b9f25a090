import Foundation

/// The identifier of a record of an entity with a unique attribute: derived from the entity name
/// and the unique value, the same on every device, so inserts of one value anywhere are inserts
/// of one record (a UUID of version 8, "custom": two FNV-1a 64-bit hashes of the entity name and
/// the value's change-log encoding).
public enum UniqueIdentity {
    /// The record identifier for `uniqueValue` of `entity`: pure, never fails, any thread.
    public static func id(entity: String, uniqueValue: AttributeValue) -> UUID {
        var bytes = Array("\(entity)\u{0}".utf8)
        var writer = LogWriter()
        writer.value(uniqueValue)
        bytes += writer.bytes
        var high = fnv1a(bytes, seed: 0xcbf2_9ce4_8422_2325)
        let low = fnv1a(bytes, seed: 0x6c62_272e_07bb_0142)
        high = (high & ~0xF000) | 0x8000  // version 8
        return RandomIdentifier.uuid(high: high, low: low)
    }

    private static func fnv1a(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return hash
    }
}
