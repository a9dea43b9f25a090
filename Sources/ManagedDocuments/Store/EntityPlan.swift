import Foundation

/// The prepared SQL of one entity: its registers (the existence register first) with their
/// types, and the statements every change runs — read a record's registers, write them back,
/// insert a new record — prepared once per store. Positional arrays instead of dictionaries: the
/// merge of one change is a loop over a few registers.
///
/// Rows are of store layout 2 (``RecordTables``): one value column per register and the row's
/// clocks (``RowClocks``) — one clock for the row when every register has the same, else a blob.
final class EntityPlan {
    let entity: EntityDescription
    /// Register names: ``RecordChange/existence``, then the attributes in the table's column order.
    let names: [String]
    /// The type of each register (`bool` for existence).
    let types: [AttributeType]
    /// The value an insert gives each register it is not given (existence: `true`).
    let defaults: [AttributeValue]
    /// Whether each register may be null (existence: no).
    let optional: [Bool]
    /// The position of the entity's unique attribute, if it has one.
    let uniquePosition: Int?
    /// Register name → position in ``names``.
    let index: [String: Int]
    /// Per register, its entry in a row's clock blob (its place among the table's register columns).
    let slots: [Int]
    /// The number of register columns of the table (the entries of a clock blob).
    let slotCount: Int
    let selectStatement: SQLiteStatement
    let writeStatement: SQLiteStatement
    let insertStatement: SQLiteStatement
    private let connection: SQLiteConnection
    /// The SQL of ``localInsertStatement``.
    private let localInsertSQL: String
    /// ``insertStatement`` for a local insert (``insertRow(_:stamp:values:devices:)``): a record
    /// that exists (`$exists` 1) with one clock for the row (`$clocks` NULL) has those two in its
    /// SQL instead of bound per row. Prepared on the first local insert (an import never needs it).
    private var localInsert: SQLiteStatement?

    private func localInsertStatement() throws(SQLiteError) -> SQLiteStatement {
        if let localInsert { return localInsert }
        let made = try SQLiteStatement(connection: connection, sql: localInsertSQL)
        localInsert = made
        return made
    }

    /// The plan of `entity`, whose table (of layout 2) exists with a column for each of its registers.
    init(_ entity: EntityDescription, connection: SQLiteConnection) throws(SQLiteError) {
        self.entity = entity
        let registerColumns = try RecordTables.registerColumns(of: entity.name, in: connection)
        // Existence first (the merge reads it at position 0), then the declared attributes in
        // column order; a column the schema no longer declares keeps its slot, unused.
        var names = [RecordChange.existence]
        var types: [AttributeType] = [.bool]
        var defaults: [AttributeValue] = [.bool(true)]
        var optional = [false]
        var uniquePosition: Int?
        for column in registerColumns where column != RecordChange.existence {
            guard let attribute = entity.attribute(named: column) else { continue }
            if attribute.isUnique { uniquePosition = names.count }
            optional.append(attribute.isOptional)
            names.append(column)
            types.append(attribute.type)
            defaults.append(attribute.defaultValue)
        }
        // An attribute without a column (never: create() adds them) is left out rather than trapping.
        self.names = names
        self.types = types
        self.defaults = defaults
        self.optional = optional
        self.uniquePosition = uniquePosition
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        self.index = index
        slots = names.map { registerColumns.firstIndex(of: $0) ?? 0 }
        slotCount = registerColumns.count
        let table = RecordTables.table(entity.name)
        let values = names.map(RecordTables.quote).joined(separator: ", ")
        let clocks = "\"$t\", \"$d\", \"$clocks\""
        selectStatement = try SQLiteStatement(connection: connection, sql: "SELECT \(clocks), \(values) FROM \(table) WHERE id = ?")
        let placeholders = "?" + String(repeating: ", ?", count: 3 + names.count)
        writeStatement = try SQLiteStatement(connection: connection, sql: """
            INSERT OR REPLACE INTO \(table) (id, \(clocks), \(values)) VALUES (\(placeholders))
            """)
        insertStatement = try SQLiteStatement(connection: connection, sql: """
            INSERT INTO \(table) (id, \(clocks), \(values)) VALUES (\(placeholders)) ON CONFLICT (id) DO NOTHING
            """)
        // id, $t, $d, then the attributes (positions 1… of `names`) from parameter 4 on.
        let attributePlaceholders = String(repeating: ", ?", count: names.count - 1)
        localInsertSQL = """
            INSERT INTO \(table) (id, \(clocks), \(values)) VALUES (?, ?, ?, NULL, 1\(attributePlaceholders)) ON CONFLICT (id) DO NOTHING
            """
        self.connection = connection
    }

    /// The position of the attribute `name` in ``names`` (never the existence register's), or
    /// `nil` when the entity does not declare it. A scan: an entity has a few attributes, and
    /// comparing short names is cheaper than hashing one.
    func position(ofAttribute name: String) -> Int? {
        var position = 1
        while position < names.count {
            if names[position] == name { return position }
            position += 1
        }
        return nil
    }

    /// The registers of record `id` in ``names``' order, or `nil` when the store never heard of
    /// it. `devices` names the device numbers (an unknown number, in a damaged store, reads as "?").
    func read(_ id: UUID, devices: DeviceNumbers) throws(SQLiteError) -> [Register]? {
        selectStatement.reset()
        try selectStatement.bindIdentifier(id)
        defer { selectStatement.reset() }
        guard try selectStatement.step() else { return nil }
        var registers: [Register] = []
        registers.reserveCapacity(names.count)
        if selectStatement.isNull(at: 2) {
            // One clock for the row.
            let packed = UInt64(bitPattern: selectStatement.integer(at: 0))
            guard packed != 0 else { return Array(repeating: .unwritten, count: names.count) }
            let timestamp = HybridTimestamp(packed: packed, device: devices.name(of: selectStatement.integer(at: 1)))
            for position in names.indices {
                registers.append(Register(value: AttributeValue(selectStatement.value(at: Int32(3 + position)), as: types[position]),
                                          timestamp: timestamp))
            }
            return registers
        }
        let clocks = selectStatement.withBlob(at: 2) { blob in slots.map { RowClocks.clock(at: $0, in: blob) } }
        for position in names.indices {
            let clock = clocks[position]
            if clock.packed == 0 {
                registers.append(.unwritten)
                continue
            }
            let value = AttributeValue(selectStatement.value(at: Int32(3 + position)), as: types[position])
            registers.append(Register(value: value, timestamp: HybridTimestamp(packed: clock.packed, device: devices.name(of: clock.device))))
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

    /// Inserts record `id` with every register written at `stamp` (`values` in ``names``' order)
    /// if the store has no record `id`: a local insert, bound straight from its values.
    ///
    /// - Returns: `false` when the record exists (nothing was written: merge it).
    func insertRow(_ id: UUID, stamp: HybridTimestamp, values: [AttributeValue], devices: DeviceNumbers) throws(SQLiteError) -> Bool {
        guard values[0] == .bool(true), stamp.packed != 0 else {
            // Not the shape of a local insert (never: an insert exists and is stamped): the general statement.
            return try insertIfAbsent(id, values.map { Register(value: $0, timestamp: stamp) }, devices: devices)
        }
        // The existence (1) and the row's one clock (`$clocks` NULL) are in the statement's SQL.
        let statement = try localInsertStatement()
        statement.reset()
        try statement.bindIdentifier(id)
        try statement.bind(Int64(bitPattern: stamp.packed), at: 2)
        try statement.bind(try devices.number(of: stamp.device), at: 3)
        for position in values.indices.dropFirst() { try statement.bind(values[position], at: Int32(3 + position)) }
        while try statement.step() {}
        statement.reset()
        return connection.changes > 0
    }

    /// Writes a row from stored parts: `clocks` per register (device numbers), `values` as
    /// stored (the migration of an older layout, whose rows already hold numbers).
    func write(_ id: UUID, clocks: [RowClocks.Clock], values: [SQLiteValue]) throws(SQLiteError) {
        let statement = writeStatement
        statement.reset()
        try statement.bindIdentifier(id)
        try bindClocks(statement) { clocks[$0] }
        for position in names.indices { try statement.bind(values[position], at: Int32(5 + position)) }
        while try statement.step() {}
        statement.reset()
    }

    private func run(_ statement: SQLiteStatement, _ id: UUID, _ registers: [Register], devices: DeviceNumbers) throws(SQLiteError) {
        statement.reset()
        try statement.bindIdentifier(id)
        // The common case, one write's registers (an insert, a new record imported): one clock,
        // its device numbered once.
        let first = registers[0].timestamp
        var uniform = true
        for register in registers.dropFirst() where register.timestamp.packed != first.packed || register.timestamp.device != first.device {
            uniform = false
            break
        }
        if uniform {
            try statement.bind(Int64(bitPattern: first.packed), at: 2)
            try statement.bind(first.packed == 0 ? 0 : try devices.number(of: first.device), at: 3)
            try statement.bind(SQLiteValue.null, at: 4)
        } else {
            var clocks: [RowClocks.Clock] = []
            clocks.reserveCapacity(registers.count)
            for register in registers {
                let packed = register.timestamp.packed
                clocks.append(RowClocks.Clock(packed: packed, device: packed == 0 ? 0 : try devices.number(of: register.timestamp.device)))
            }
            try bindClocks(statement) { clocks[$0] }
        }
        try statement.bind(Int64(registers[0].value == .bool(true) ? 1 : 0), at: 5)
        for position in registers.indices.dropFirst() { try statement.bind(registers[position].value, at: Int32(5 + position)) }
        while try statement.step() {}
        statement.reset()
    }

    /// Binds parameters 2–4 (`$t`, `$d`, `$clocks`) for per-register clocks: one clock when they
    /// are all equal, else the blob (in slot order) with the latest as the row's.
    private func bindClocks(_ statement: SQLiteStatement, _ clock: (Int) -> RowClocks.Clock) throws(SQLiteError) {
        let first = clock(0)
        var uniform = true
        var latest = first
        for position in names.indices.dropFirst() {
            let next = clock(position)
            if next != first { uniform = false }
            if next.packed > latest.packed { latest = next }
        }
        try statement.bind(Int64(bitPattern: latest.packed), at: 2)
        try statement.bind(latest.packed == 0 ? 0 : latest.device, at: 3)
        if uniform {
            try statement.bind(SQLiteValue.null, at: 4)
        } else {
            var inSlots = Array(repeating: RowClocks.Clock.zero, count: slotCount)
            for position in names.indices { inSlots[slots[position]] = clock(position) }
            try statement.bind(.blob(RowClocks.blob(inSlots)), at: 4)
        }
    }
}
