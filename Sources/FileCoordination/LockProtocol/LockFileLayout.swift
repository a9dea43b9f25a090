/// Where each lock lives inside a lock file. Lock files are empty: OFD byte-range locks may cover
/// offsets past the end of a file, so the "bytes" below are lock positions, not data.
///
/// ```
/// offset 0            tree     exclusive: a delete/move/replace of this directory is in progress
///                              shared (briefly): a lock file inside this directory is being created
/// offset 1            pending  exclusive: a writer is waiting; new readers queue behind it
/// offset 2            R0       shared by readers that belong to a purpose group
/// offset 3 ..< 3+2^32 columns  shared (all) by plain readers, exclusive (all) by plain writers,
///                              exclusive (one column) by a purpose-group writer
/// offset 2^34 ...     rows     one row of 2^32 cells per purpose group (2^28 rows): a group
///                              member holds the other groups' rows shared, and a group writer
///                              also holds its own cell exclusive
/// offset 2^61         U0       upgrade marker, held only while a reader waits to become a writer:
///                              exclusive by a plain upgrader, shared by a group upgrader
/// offset 2^61+2^32 …  U rows   a group upgrader holds the other groups' U rows shared and its own
///                              U cell exclusive (the same trick as the rows above)
/// ```
/// Every transition on these bytes is in `LockProtocol`. See Docs/Coordination.md for why each
/// range exists and how the modes compose.
enum LockFileLayout {
    static let tree = 0
    static let pending = 1
    static let groupReader = 2
    static let columnsStart = 3
    static let columnCount = 1 << 32
    /// R0 plus every column: what plain readers share and plain writers hold exclusively.
    static let itemStart = groupReader
    static let itemLength = 1 + columnCount

    static let rowsStart = 1 << 34
    static let rowLength = 1 << 32
    static let rowCount = 1 << 28
    static var rowsEnd: Int { rowsStart + rowCount * rowLength }

    static func rowStart(_ row: Int) -> Int { rowsStart + row * rowLength }
    static func column(_ column: Int) -> Int { columnsStart + column }
    static func cell(row: Int, column: Int) -> Int { rowStart(row) + column }

    /// The upgrade band: the same "everyone but my friends" shape as R0 and the rows, but only
    /// ever taken without waiting, so two readers that both wait to become writers of one item
    /// (and so wait for each other) find out at once.
    static let upgradeGate = 1 << 61
    static let upgradeRowsStart = upgradeGate + rowLength
    static var upgradeRowsEnd: Int { upgradeRowsStart + rowCount * rowLength }
    static func upgradeRowStart(_ row: Int) -> Int { upgradeRowsStart + row * rowLength }
    static func upgradeCell(row: Int, column: Int) -> Int { upgradeRowStart(row) + column }
}
