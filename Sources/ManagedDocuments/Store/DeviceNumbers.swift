/// The small numbers a store writes in its registers' device columns instead of device ids (up
/// to 64 characters each, one per register of every row), kept in `md_devices`. Number 0 is the
/// empty id of ``HybridTimestamp/zero``. A new device gets the next number inside the current
/// transaction; a rollback forgets it (``reload()``).
///
/// Not thread-safe: used under its ``RecordStore``'s owner's lock.
final class DeviceNumbers {
    private let connection: SQLiteConnection
    private var numbers: [String: Int64] = ["": 0]
    private var names: [Int64: String] = [0: ""]
    /// The device asked for last, with its number: most registers of a row, and most rows of a
    /// save or an import, are one device's (comparing equal strings is cheaper than hashing).
    private var last: (name: String, number: Int64)?

    init(connection: SQLiteConnection) throws(SQLiteError) {
        self.connection = connection
        try reload()
    }

    /// Reads the table again (after a rollback).
    func reload() throws(SQLiteError) {
        numbers = ["": 0]
        names = [0: ""]
        last = nil
        for row in try connection.rows("SELECT number, name FROM md_devices") {
            guard row.count == 2, case .integer(let number) = row[0], case .text(let name) = row[1] else { continue }
            numbers[name] = number
            names[number] = name
        }
    }

    /// The number of `device`, given it now if it has none.
    func number(of device: String) throws(SQLiteError) -> Int64 {
        if let last, last.name == device { return last.number }
        if let known = numbers[device] {
            last = (device, known)
            return known
        }
        let next = (names.keys.max() ?? 0) + 1
        try connection.run("INSERT INTO md_devices (number, name) VALUES (?, ?)", [.integer(next), .text(device)])
        numbers[device] = next
        names[next] = device
        return next
    }

    /// The device numbered `number`; "?" for a number the table lacks (a damaged store).
    func name(of number: Int64) -> String { names[number] ?? "?" }
}
