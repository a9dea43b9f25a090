import Foundation

/// The clocks of one stored record (store layout 2, see ``RecordTables``): one clock for the
/// whole row when every register was written by the same write — every insert, every record an
/// import brings new, every update of all its attributes — and a blob of per-register clocks
/// only when they differ.
///
/// A row holds `"$t"` (a packed HLC) and `"$d"` (a device number of ``DeviceNumbers``), and
/// `"$clocks"`:
/// - `NULL`: every register has the row's clock (`$t` 0: none was ever written);
/// - a blob: each register's clock in column order (the existence register first), 12 bytes
///   each — the packed HLC (8 bytes) and the device number (4 bytes), little-endian. A register
///   past the blob's end was never written (an attribute a later schema added). `$t`/`$d` then
///   hold the latest of them (informative: the reads take the blob).
enum RowClocks {
    static let entrySize = 12

    /// One register's clock as the row stores it: the packed HLC and the device's number.
    struct Clock: Equatable {
        var packed: UInt64
        var device: Int64
        static let zero = Clock(packed: 0, device: 0)
    }

    /// The blob of `clocks` (in column order).
    static func blob(_ clocks: [Clock]) -> Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(clocks.count * entrySize)
        for clock in clocks {
            withUnsafeBytes(of: clock.packed.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: clock.device).littleEndian) { bytes += $0 }
        }
        return Data(bytes)
    }

    /// The clock of register `position` in `blob` (raw bytes of the column); zero past its end
    /// (never written).
    static func clock(at position: Int, in blob: UnsafeRawBufferPointer) -> Clock {
        let offset = position * entrySize
        guard offset + entrySize <= blob.count else { return .zero }
        let packed = UInt64(littleEndian: blob.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let device = UInt32(littleEndian: blob.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
        return Clock(packed: packed, device: Int64(device))
    }
}
