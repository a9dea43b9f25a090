/// One instant of a ``HybridLogicalClock``, with the device that made it: the version of one
/// attribute write. Totally ordered: by physical milliseconds, then the logical counter, then the
/// device identifier (the tie-break every device computes alike).
public struct HybridTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970 in the high 48 bits, the logical counter in the low 16.
    public let packed: UInt64
    /// The device that made the write.
    public let device: String

    public init(packed: UInt64, device: String) {
        self.packed = packed
        self.device = device
    }

    public init(milliseconds: UInt64, counter: UInt16, device: String) {
        self.packed = (milliseconds << 16) | UInt64(counter)
        self.device = device
    }

    /// The zero timestamp: before every write (the version of an attribute never written).
    public static let zero = HybridTimestamp(packed: 0, device: "")

    public var milliseconds: UInt64 { packed >> 16 }
    public var counter: UInt16 { UInt16(truncatingIfNeeded: packed) }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.packed != rhs.packed { return lhs.packed < rhs.packed }
        return lhs.device.utf8.lexicographicallyPrecedes(rhs.device.utf8)
    }

    public var description: String { "\(milliseconds).\(counter)@\(device)" }
}
