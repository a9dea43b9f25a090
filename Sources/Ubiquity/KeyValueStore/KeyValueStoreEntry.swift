import Foundation

/// When and where one write of a key was made: the order in which writes of the same key win.
///
/// Writes are ordered by ``time`` (nanoseconds since 1970, from ``KeyValueStoreClock``), then by
/// ``device`` (byte order of the device identifier), then by ``tieBreaker`` (the bytes of the
/// write's encoded value): the later write wins, and two writes with the same time and device —
/// two processes of one device in the same nanosecond — still have one winner, the same on every
/// device. The order is total, so merging is commutative, associative and idempotent: every
/// device that has seen the same writes holds the same values, whatever order they arrived in.
public struct KeyValueStoreStamp: Sendable, Hashable, Comparable {
    /// Nanoseconds since 1970 (a hybrid clock: see ``KeyValueStoreClock``).
    public var time: Int64
    /// The device that made the write.
    public var device: String

    /// The stamp of a write made at `time` by `device`.
    public init(time: Int64, device: String) {
        self.time = time
        self.device = device
    }

    /// Ordered by time, then by the device identifier's UTF-8 bytes (the later write sorts last).
    public static func < (left: Self, right: Self) -> Bool {
        if left.time != right.time { return left.time < right.time }
        return left.device.utf8.lexicographicallyPrecedes(right.device.utf8)
    }
}

/// The last write of one key: a value, or a deletion (a *tombstone*, kept so that the deletion
/// wins over older values still held by other devices' files).
struct KeyValueStoreEntry: Sendable, Hashable {
    var stamp: KeyValueStoreStamp
    /// `nil` for a deletion.
    var value: KeyValueStoreValue?
    /// ``KeyValueStoreValue/size`` of `value` (0 for a deletion), computed once.
    let size: Int

    init(stamp: KeyValueStoreStamp, value: KeyValueStoreValue?) {
        self.stamp = stamp
        self.value = value
        self.size = value?.size ?? 0
    }

    /// Whether this write wins over `other` (a write of the same key).
    func wins(over other: KeyValueStoreEntry) -> Bool {
        if stamp != other.stamp { return other.stamp < stamp }
        return Self.tieBreaker(of: other).lexicographicallyPrecedes(Self.tieBreaker(of: self))
    }

    /// The bytes compared when two writes have the same stamp: the canonical JSON of the value
    /// (a deletion sorts first). Only ever needed for two processes of one device writing the
    /// same key in the same nanosecond.
    private static func tieBreaker(of entry: KeyValueStoreEntry) -> [UInt8] {
        guard let value = entry.value else { return [] }
        var writer = KeyValueJSONWriter(capacity: 64)
        writer.value(value)
        return writer.bytes + [1]
    }

    /// `entries` merged into `into`, key by key: the winning write of each key.
    static func merge(_ entries: [String: KeyValueStoreEntry], into merged: inout [String: KeyValueStoreEntry]) {
        for (key, entry) in entries {
            if let existing = merged[key], !entry.wins(over: existing) { continue }
            merged[key] = entry
        }
    }
}

/// The clock that stamps writes: the wall clock in nanoseconds, but never behind a stamp this
/// store has already seen (its own or another device's) — a *hybrid logical clock*. So a write
/// made after this device read another device's write of the same key always wins over it, even
/// when the other device's clock runs ahead; and writes of one store are strictly increasing.
/// Thread-safe (used under the store's lock).
struct KeyValueStoreClock: Sendable {
    private(set) var latest: Int64 = 0

    /// A new time, later than every time seen so far — or `Int64.max` again once a stamp there was
    /// seen (a damaged file, a clock set past 2262): the clock saturates rather than wrap back.
    mutating func next() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (nanoseconds, overflow) = Int64(now.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        let (wall, overflowAgain) = nanoseconds.addingReportingOverflow(Int64(now.tv_nsec))
        latest = max(overflow || overflowAgain ? .max : wall, latest == .max ? .max : latest + 1)
        return latest
    }

    /// Notes a time seen in a store file.
    mutating func observe(_ time: Int64) {
        if time > latest { latest = time }
    }
}
