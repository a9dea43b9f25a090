/// One versioned value: what the latest write of one attribute of one record set, and its
/// timestamp. Merging two registers keeps the one with the later timestamp (``merged(with:)``).
public struct Register: Sendable, Hashable {
    public var value: AttributeValue
    public var timestamp: HybridTimestamp

    public init(value: AttributeValue, timestamp: HybridTimestamp) {
        self.value = value
        self.timestamp = timestamp
    }

    /// An attribute never written: null, at the zero timestamp.
    public static let unwritten = Register(value: .null, timestamp: .zero)

    /// The register that wins between `self` and `other` (see ``MergeRules``).
    func merged(with other: Register) -> Register {
        MergeRules.incomingWins(other.timestamp, over: timestamp) ? other : self
    }
}
