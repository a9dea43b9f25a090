import Foundation

/// A hybrid logical clock (Kulkarni et al., 2014): timestamps close to the wall clock that still
/// order every write after every write its device had seen, whatever the devices' clocks say.
///
/// ``tick()`` stamps a local write: later than the wall clock's now and than anything seen.
/// ``observe(_:)`` takes in a timestamp read from another device's log, so this device's next
/// write is later than it. A device whose wall clock is behind therefore still writes "after"
/// what it has seen; one whose clock is ahead pulls the others forward (bounded by how far ahead
/// it is). A value type: its owner serializes access.
public struct HybridLogicalClock: Sendable {
    public let device: String
    /// The latest packed value handed out or observed.
    public private(set) var latest: UInt64
    /// The wall clock in milliseconds since 1970 (injected for tests).
    let now: @Sendable () -> UInt64

    public init(device: String, latest: UInt64 = 0,
                now: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallMilliseconds) {
        self.device = device
        self.latest = latest
        self.now = now
    }

    /// The wall clock in milliseconds since 1970 (`CLOCK_REALTIME`; 0 before 1970): read for
    /// every local write, so straight from the system rather than through `Date`.
    @Sendable public static func wallMilliseconds() -> UInt64 {
        var time = timespec()
        guard clock_gettime(CLOCK_REALTIME, &time) == 0, time.tv_sec >= 0 else { return 0 }
        return UInt64(time.tv_sec) &* 1000 &+ UInt64(time.tv_nsec / 1_000_000)
    }

    /// A new timestamp for a local write, later than every one handed out or observed.
    public mutating func tick() -> HybridTimestamp {
        let wall = (now() & 0xFFFF_FFFF_FFFF) << 16
        // Either the wall clock moved past everything seen (counter 0), or the counter advances
        // (carrying into the milliseconds if it overflows: still strictly increasing).
        latest = wall > latest ? wall : latest &+ 1
        return HybridTimestamp(packed: latest, device: device)
    }

    /// Takes in a timestamp seen in another device's change.
    public mutating func observe(_ timestamp: HybridTimestamp) {
        if timestamp.packed > latest { latest = timestamp.packed }
    }
}
