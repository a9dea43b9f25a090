import Foundation

/// How the schema maps to SQLite tables, and how the store's bookkeeping tables look.
///
/// One table per entity, `"e_<Entity>"`, keyed by the record's UUID (`id`, its 16 bytes as a
/// blob: half the size of its text, no formatting, the same order) and, for every
/// register — the existence register `"$exists"` and each attribute — three columns: the value
/// (`"title"`), the timestamp's packed HLC (`"title$t"`) and its device (`"title$d"`, a number
/// of `md_devices`: device ids are up to 64 characters, and a row holds one per register). An
/// attribute never written has HLC 0 and device 0 (``HybridTimestamp/zero``). Deleted
/// records stay as tombstones (`"$exists"` = 0), so a late update cannot revive them and a late
/// insert older than the delete loses to it.
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

    /// The register names of an entity, in column order: the existence register first.
    static func registers(of entity: EntityDescription) -> [String] {
        [RecordChange.existence] + entity.attributes.map(\.name)
    }

    static func columnDeclarations(register: String, type: AttributeType?) -> [String] {
        let affinity = switch type {
        case .string?, .uuid?: "TEXT"
        case .integer?, .bool?, nil: "INTEGER"
        case .double?, .date?: "REAL"
        case .data?: "BLOB"
        }
        return ["\(quote(register)) \(affinity)", "\(quote(register + "$t")) INTEGER NOT NULL DEFAULT 0",
                "\(quote(register + "$d")) INTEGER NOT NULL DEFAULT 0"]
    }

    static let bookkeeping = """
        CREATE TABLE IF NOT EXISTS md_meta (key TEXT PRIMARY KEY NOT NULL, value);
        CREATE TABLE IF NOT EXISTS md_devices (number INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
        CREATE TABLE IF NOT EXISTS md_applied (name TEXT PRIMARY KEY NOT NULL, device TEXT NOT NULL, sequence INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS md_coverage (device TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS md_peer_coverage (peer TEXT NOT NULL, device TEXT NOT NULL, sequence INTEGER NOT NULL,
                                                     PRIMARY KEY (peer, device));
        """

    /// Creates the entity tables that are missing and adds the columns an older schema lacked.
    static func create(_ schema: ManagedSchema, in connection: SQLiteConnection) throws(SQLiteError) {
        for entity in schema.entities {
            let existing = Set(try connection.rows("PRAGMA table_info(\(table(entity.name)))").compactMap { row -> String? in
                if row.count > 1, case .text(let name) = row[1] { return name }
                return nil
            })
            if existing.isEmpty {
                try createTable(entity, in: connection)
            } else if try identifiersAreText(entity, in: connection) {
                try migrateTextIdentifiers(entity, columns: existing, in: connection)
            } else {
                for attribute in entity.attributes where !existing.contains(attribute.name) {
                    for column in columnDeclarations(register: attribute.name, type: attribute.type) {
                        try connection.execute("ALTER TABLE \(table(entity.name)) ADD COLUMN \(column)")
                    }
                }
            }
        }
    }

    /// `CREATE TABLE` for `entity` with every register of the schema.
    private static func createTable(_ entity: EntityDescription, in connection: SQLiteConnection) throws(SQLiteError) {
        var columns = ["id BLOB PRIMARY KEY NOT NULL"]
        columns += columnDeclarations(register: RecordChange.existence, type: nil)
        for attribute in entity.attributes { columns += columnDeclarations(register: attribute.name, type: attribute.type) }
        try connection.execute("CREATE TABLE \(table(entity.name)) (\(columns.joined(separator: ", ")))")
    }

    /// Whether the entity's table is of the first development version: identifiers as text in
    /// a rowid table.
    private static func identifiersAreText(_ entity: EntityDescription, in connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        try connection.rows("PRAGMA table_info(\(table(entity.name)))").contains { row in
            row.count > 2 && row[1] == .text("id") && row[2] == .text("TEXT")
        }
    }

    /// Rewrites a table of the first development version (text identifiers) in the current
    /// layout, keeping every register: inside the caller's transaction, so a crash leaves the
    /// old table whole. A row whose identifier is not a UUID (a damaged store) is dropped.
    private static func migrateTextIdentifiers(_ entity: EntityDescription, columns: Set<String>,
                                               in connection: SQLiteConnection) throws(SQLiteError) {
        let old = quote("e_" + entity.name + "$text")
        try connection.execute("ALTER TABLE \(table(entity.name)) RENAME TO \(old)")
        try createTable(entity, in: connection)
        let current = Set(registers(of: entity).flatMap { [$0, $0 + "$t", $0 + "$d"] })
        let kept = columns.intersection(current).sorted()
        let select = try SQLiteStatement(connection: connection,
                                         sql: "SELECT id\(kept.map { ", " + quote($0) }.joined()) FROM \(old)")
        let insert = try SQLiteStatement(connection: connection, sql: """
            INSERT OR REPLACE INTO \(table(entity.name)) (id\(kept.map { ", " + quote($0) }.joined()))
            VALUES (?\(String(repeating: ", ?", count: kept.count)))
            """)
        try select.bind([])
        while try select.step() {
            guard let uuid = select.uuid(at: 0) else { continue }
            insert.reset()
            try insert.bind(uuid, at: 1)
            for position in kept.indices { try insert.bind(select.value(at: Int32(position + 1)), at: Int32(position + 2)) }
            while try insert.step() {}
        }
        select.reset()
        insert.reset()
        try connection.execute("DROP TABLE \(old)")
    }
}
