import Foundation

/// How the schema maps to SQLite tables, and how the store's bookkeeping tables look.
///
/// Store layout 2 ("one clock per record write"): one table per entity, `"e_<Entity>"`, keyed by
/// the record's UUID (`id`, its 16 bytes as a blob: half the size of its text, no formatting,
/// the same order; a `WITHOUT ROWID` table, so a record is one B-tree entry, not a row plus an
/// index entry), then the row's clocks — `"$t"` (a packed HLC), `"$d"` (a device number of
/// `md_devices`: device ids are up to 64 characters) and `"$clocks"` (NULL when every register
/// has the row's clock, else a blob of per-register clocks: ``RowClocks``) — then one value
/// column per register: the existence register `"$exists"` and each attribute (`"title"`). An
/// attribute never written has HLC 0 and device 0 (``HybridTimestamp/zero``). Deleted records
/// stay as tombstones (`"$exists"` = 0), so a late update cannot revive them and a late insert
/// older than the delete loses to it.
///
/// Layout 1 (before) had three columns per register — value, `"title$t"`, `"title$d"` — in a
/// rowid table (and, in the first development version, text identifiers). A store of layout 1
/// is rewritten in layout 2 when opened (``create(_:in:)``), every register and clock kept.
///
/// Bookkeeping (`md_` tables): `md_devices` (device numbers and ids), `md_meta` (schema version, clock, this device's last sequence and
/// last published file), `md_applied` (the log and baseline files applied, by name),
/// `md_coverage` (per device, the sequence up to which a baseline made all its logs applied) and
/// `md_peer_coverage` (what each device's latest file says it had applied: compaction reads it).
enum RecordTables {
    static func table(_ entity: String) -> String { quote("e_" + entity) }

    /// Quotes an identifier (names are checked by ``ManagedSchema/validate()``; quotes doubled anyway).
    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The record identifier a row's `id` column holds: 16 bytes (or, before the migration of a
    /// store of the first development version, text); `nil` for anything else.
    static func uuid(from value: SQLiteValue) -> UUID? {
        switch value {
        case .blob(let data) where data.count == 16:
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { raw in data.withUnsafeBytes { raw.copyMemory(from: $0) } }
            return UUID(uuid: uuid)
        case .text(let text): return UUID(uuidString: text)
        default: return nil
        }
    }

    /// The register names of an entity, in the order of a new table's columns: the existence register first.
    static func registers(of entity: EntityDescription) -> [String] {
        [RecordChange.existence] + entity.attributes.map(\.name)
    }

    /// The columns before the register columns in layout 2.
    static let clockColumns: Set<String> = ["id", "$t", "$d", "$clocks"]

    /// The value column of one register.
    static func columnDeclaration(register: String, type: AttributeType?) -> String {
        let affinity = switch type {
        case .string?, .uuid?: "TEXT"
        case .integer?, .bool?, nil: "INTEGER"
        case .double?, .date?: "REAL"
        case .data?: "BLOB"
        }
        return "\(quote(register)) \(affinity)"
    }

    /// The columns of `entity`'s table, in order.
    static func columns(of entity: String, in connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        try connection.rows("PRAGMA table_info(\(table(entity)))").compactMap { row -> String? in
            if row.count > 1, case .text(let name) = row[1] { return name }
            return nil
        }
    }

    /// The register columns of `entity`'s table (layout 2), in order: the slots of its clock blobs.
    static func registerColumns(of entity: String, in connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        try columns(of: entity, in: connection).filter { !clockColumns.contains($0) }
    }

    static let bookkeeping = """
        CREATE TABLE IF NOT EXISTS md_meta (key TEXT PRIMARY KEY NOT NULL, value);
        CREATE TABLE IF NOT EXISTS md_devices (number INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
        CREATE TABLE IF NOT EXISTS md_applied (name TEXT PRIMARY KEY NOT NULL, device TEXT NOT NULL, sequence INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS md_coverage (device TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS md_peer_coverage (peer TEXT NOT NULL, device TEXT NOT NULL, sequence INTEGER NOT NULL,
                                                     PRIMARY KEY (peer, device));
        """

    /// Creates the entity tables that are missing, rewrites tables of layout 1 in layout 2, and
    /// adds the columns an older schema lacked. Inside the caller's transaction.
    static func create(_ schema: ManagedSchema, in connection: SQLiteConnection) throws(SQLiteError) {
        for entity in schema.entities {
            let existing = try columns(of: entity.name, in: connection)
            if existing.isEmpty {
                try createTable(entity, in: connection)
            } else if !existing.contains("$clocks") {
                try migrateLayoutOne(entity, columns: existing, in: connection)
            } else {
                let missing = entity.attributes.filter { !existing.contains($0.name) }
                guard !missing.isEmpty else { continue }
                try giveRowClocksTheirBlob(entity, slots: existing.count - clockColumns.count, in: connection)
                for attribute in missing {
                    try connection.execute("ALTER TABLE \(table(entity.name)) ADD COLUMN \(columnDeclaration(register: attribute.name, type: attribute.type))")
                }
            }
        }
    }

    /// `CREATE TABLE` for `entity` with every register of the schema (layout 2).
    private static func createTable(_ entity: EntityDescription, in connection: SQLiteConnection) throws(SQLiteError) {
        var columns = ["id BLOB PRIMARY KEY NOT NULL", "\"$t\" INTEGER NOT NULL DEFAULT 0", "\"$d\" INTEGER NOT NULL DEFAULT 0",
                       "\"$clocks\" BLOB"]
        columns.append(columnDeclaration(register: RecordChange.existence, type: nil))
        for attribute in entity.attributes { columns.append(columnDeclaration(register: attribute.name, type: attribute.type)) }
        try connection.execute("CREATE TABLE \(table(entity.name)) (\(columns.joined(separator: ", "))) WITHOUT ROWID")
    }

    /// Before columns are added to a table: a row with one clock (`$clocks` NULL) gets the blob
    /// saying so for its `slots` registers, so the added ones read as never written, not as
    /// written with the row's clock.
    private static func giveRowClocksTheirBlob(_ entity: EntityDescription, slots: Int, in connection: SQLiteConnection) throws(SQLiteError) {
        let select = try SQLiteStatement(connection: connection, sql: """
            SELECT id, "$t", "$d" FROM \(table(entity.name)) WHERE "$clocks" IS NULL AND "$t" != 0
            """)
        let update = try SQLiteStatement(connection: connection, sql: "UPDATE \(table(entity.name)) SET \"$clocks\" = ? WHERE id = ?")
        try select.bind([])
        var rows: [(id: SQLiteValue, clock: RowClocks.Clock)] = []
        while try select.step() {
            rows.append((select.value(at: 0), RowClocks.Clock(packed: UInt64(bitPattern: select.integer(at: 1)), device: select.integer(at: 2))))
        }
        select.reset()
        for row in rows {
            try update.run([.blob(RowClocks.blob(Array(repeating: row.clock, count: slots))), row.id])
        }
    }

    /// Rewrites a table of layout 1 (three columns per register; in the first development
    /// version, text identifiers in a rowid table) in layout 2, keeping every register and its
    /// clock: inside the caller's transaction, so a crash leaves the old table whole. A row whose
    /// identifier is not a UUID (a damaged store) is dropped.
    private static func migrateLayoutOne(_ entity: EntityDescription, columns: [String],
                                         in connection: SQLiteConnection) throws(SQLiteError) {
        let old = quote("e_" + entity.name + "$layout1")
        try connection.execute("ALTER TABLE \(table(entity.name)) RENAME TO \(old)")
        try createTable(entity, in: connection)
        let plan = try EntityPlan(entity, connection: connection)
        let present = Set(columns)
        // Per register of the plan: whether the old table had its three columns.
        let kept = plan.names.map { present.contains($0) && present.contains($0 + "$t") && present.contains($0 + "$d") }
        var selected = ["id"]
        for (position, name) in plan.names.enumerated() where kept[position] {
            selected += [quote(name), quote(name + "$t"), quote(name + "$d")]
        }
        let select = try SQLiteStatement(connection: connection, sql: "SELECT \(selected.joined(separator: ", ")) FROM \(old)")
        try select.bind([])
        while try select.step() {
            guard let uuid = select.uuid(at: 0) else { continue }
            var clocks: [RowClocks.Clock] = []
            var values: [SQLiteValue] = []
            var column: Int32 = 1
            for position in plan.names.indices {
                guard kept[position] else {
                    clocks.append(.zero)
                    values.append(.null)
                    continue
                }
                let packed = UInt64(bitPattern: select.integer(at: column + 1))
                clocks.append(packed == 0 ? .zero : RowClocks.Clock(packed: packed, device: select.integer(at: column + 2)))
                values.append(select.value(at: column))
                column += 3
            }
            try plan.write(uuid, clocks: clocks, values: values)
        }
        select.reset()
        try connection.execute("DROP TABLE \(old)")
    }
}
