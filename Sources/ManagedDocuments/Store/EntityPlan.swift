import Foundation

/// The prepared SQL of one entity: its registers in column order (the existence register first)
/// with their types, and the two statements every change runs — read a record's registers, write
/// them back — prepared once per store. Positional arrays instead of dictionaries: the merge of
/// one change is a loop over a few registers.
final class EntityPlan {
    let entity: EntityDescription
    /// Register names in column order: ``RecordChange/existence``, then the attributes.
    let names: [String]
    /// The type of each register (`bool` for existence).
    let types: [AttributeType]
    /// Register name → position in ``names``.
    let index: [String: Int]
    let selectStatement: SQLiteStatement
    let writeStatement: SQLiteStatement
    let insertStatement: SQLiteStatement
    private let connection: SQLiteConnection

    init(_ entity: EntityDescription, connection: SQLiteConnection) throws(SQLiteError) {
        self.entity = entity
        names = RecordTables.registers(of: entity)
        types = [.bool] + entity.attributes.map(\.type)
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        self.index = index
        let columns = names.flatMap { [RecordTables.quote($0), RecordTables.quote($0 + "$t"), RecordTables.quote($0 + "$d")] }
        selectStatement = try SQLiteStatement(connection: connection,
                                     sql: "SELECT \(columns.joined(separator: ", ")) FROM \(RecordTables.table(entity.name)) WHERE id = ?")
        writeStatement = try SQLiteStatement(connection: connection, sql: """
            INSERT OR REPLACE INTO \(RecordTables.table(entity.name)) (id, \(columns.joined(separator: ", ")))
            VALUES (?\(String(repeating: ", ?", count: columns.count)))
            """)
        insertStatement = try SQLiteStatement(connection: connection, sql: """
            INSERT INTO \(RecordTables.table(entity.name)) (id, \(columns.joined(separator: ", ")))
            VALUES (?\(String(repeating: ", ?", count: columns.count))) ON CONFLICT (id) DO NOTHING
            """)
        self.connection = connection
    }

    /// The registers of record `id` in column order, or `nil` when the store never heard of it.
    /// `devices` names the device numbers (an unknown number, in a damaged store, reads as "?").
    func read(_ id: UUID, devices: DeviceNumbers) throws(SQLiteError) -> [Register]? {
        selectStatement.reset()
        try selectStatement.bind(id, at: 1)
        defer { selectStatement.reset() }
        guard try selectStatement.step() else { return nil }
        var registers: [Register] = []
        registers.reserveCapacity(names.count)
        for position in names.indices {
            let column = Int32(3 * position)
            let packed = UInt64(bitPattern: selectStatement.integer(at: column + 1))
            if packed == 0 {
                registers.append(.unwritten)
                continue
            }
            let device = devices.name(of: selectStatement.integer(at: column + 2))
            let value = AttributeValue(selectStatement.value(at: column), as: types[position])
            registers.append(Register(value: value, timestamp: HybridTimestamp(packed: packed, device: device)))
        }
        return registers
    }

    /// Writes every register of record `id`; `devices` numbers the devices (adding new ones).
    func write(_ id: UUID, _ registers: [Register], devices: DeviceNumbers) throws(SQLiteError) {
        try run(writeStatement, id, registers, devices: devices)
    }

    /// Inserts record `id` with `registers` if the store has no record `id`: one B-tree
    /// insert, no read (a record new to the store, the common case of an import and every local
    /// insert).
    ///
    /// - Returns: `false` when the record exists (nothing was written: read and merge it).
    func insertIfAbsent(_ id: UUID, _ registers: [Register], devices: DeviceNumbers) throws(SQLiteError) -> Bool {
        try run(insertStatement, id, registers, devices: devices)
        return connection.changes > 0
    }

    private func run(_ statement: SQLiteStatement, _ id: UUID, _ registers: [Register], devices: DeviceNumbers) throws(SQLiteError) {
        statement.reset()
        try statement.bind(id, at: 1)
        var parameter: Int32 = 2
        for (position, register) in registers.enumerated() {
            if position == 0 {
                try statement.bind(register.value == .bool(true) ? 1 : 0, at: parameter)
            } else {
                try statement.bind(register.value.sqliteValue, at: parameter)
            }
            try statement.bind(Int64(bitPattern: register.timestamp.packed), at: parameter + 1)
            let device = register.timestamp.packed == 0 ? 0 : try devices.number(of: register.timestamp.device)
            try statement.bind(device, at: parameter + 2)
            parameter += 3
        }
        while try statement.step() {}
        statement.reset()
    }
}
