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
    let select: SQLiteStatement
    let write: SQLiteStatement

    init(_ entity: EntityDescription, connection: SQLiteConnection) throws(SQLiteError) {
        self.entity = entity
        names = RecordTables.registers(of: entity)
        types = [.bool] + entity.attributes.map(\.type)
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        self.index = index
        let columns = names.flatMap { [RecordTables.quote($0), RecordTables.quote($0 + "$t"), RecordTables.quote($0 + "$d")] }
        select = try SQLiteStatement(connection: connection,
                                     sql: "SELECT \(columns.joined(separator: ", ")) FROM \(RecordTables.table(entity.name)) WHERE id = ?")
        write = try SQLiteStatement(connection: connection, sql: """
            INSERT OR REPLACE INTO \(RecordTables.table(entity.name)) (id, \(columns.joined(separator: ", ")))
            VALUES (?\(String(repeating: ", ?", count: columns.count)))
            """)
    }

    /// The registers of record `id` in column order, or `nil` when the store never heard of it.
    /// `devices` names the device numbers (an unknown number, in a damaged store, reads as "?").
    func read(_ id: String, devices: DeviceNumbers) throws(SQLiteError) -> [Register]? {
        try select.bind([.text(id)])
        defer { select.reset() }
        guard try select.step() else { return nil }
        var registers: [Register] = []
        registers.reserveCapacity(names.count)
        for position in names.indices {
            let column = Int32(3 * position)
            let packed: UInt64 = if case .integer(let number) = select.value(at: column + 1) { UInt64(bitPattern: number) } else { 0 }
            if packed == 0 {
                registers.append(.unwritten)
                continue
            }
            let device: String = if case .integer(let number) = select.value(at: column + 2) { devices.name(of: number) } else { "?" }
            let value = AttributeValue(select.value(at: column), as: types[position])
            registers.append(Register(value: value, timestamp: HybridTimestamp(packed: packed, device: device)))
        }
        return registers
    }

    /// Writes every register of record `id`; `devices` numbers the devices (adding new ones).
    func write(_ id: String, _ registers: [Register], devices: DeviceNumbers) throws(SQLiteError) {
        write.reset()
        try write.bind(.text(id), at: 1)
        var parameter: Int32 = 2
        for (position, register) in registers.enumerated() {
            let value: SQLiteValue = position == 0 ? .integer(register.value == .bool(true) ? 1 : 0) : register.value.sqliteValue
            try write.bind(value, at: parameter)
            try write.bind(.integer(Int64(bitPattern: register.timestamp.packed)), at: parameter + 1)
            let device = register.timestamp.packed == 0 ? 0 : try devices.number(of: register.timestamp.device)
            try write.bind(.integer(device), at: parameter + 2)
            parameter += 3
        }
        while try write.step() {}
        write.reset()
    }
}
