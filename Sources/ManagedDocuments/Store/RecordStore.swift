import Foundation

/// The local record store: one SQLite database holding every record's registers (see
/// ``RecordTables``), the changes of this device not yet published (``pending``, inside the
/// open transaction), and the bookkeeping of which logs were applied.
///
/// Every change — a local insert, update or delete, or one read from another device's log —
/// goes through ``apply(_:)``, which merges it register by register (``MergeRules``). Local
/// changes are stamped by the store's ``HybridLogicalClock`` and so always win locally; they are
/// applied inside a transaction that stays open until ``commit(publishing:)`` (the save), so
/// a crash before the save leaves the store as it was at the last save.
///
/// Not thread-safe: its owner (``StoreSynchronizer``) serializes every call.
final class RecordStore {
    let schema: ManagedSchema
    let device: String
    let connection: SQLiteConnection
    var clock: HybridLogicalClock
    /// Local changes made since the last commit, in order, encoded as the next change log carries them.
    private(set) var pendingLog = PendingLog()

    /// The pending changes as changes (tests: decoded from ``pendingLog``, as another device would).
    var pending: [RecordChange] {
        let file = ChangeLogFile(kind: .log, schemaVersion: schema.version, device: device, sequence: 0, writtenMilliseconds: 0,
                                 coverage: [:], changes: [])
        return (try? ChangeLogFile.decode(file.encoded(pending: pendingLog)))?.changes ?? []
    }

    /// Whether local changes wait for the save.
    var hasPendingChanges: Bool { !pendingLog.isEmpty }
    /// Imported changes not yet committed (they share the open transaction with ``pending``).
    private(set) var hasUncommittedImports = false

    /// The numbers of the devices in the registers' `$d` columns.
    let devices: DeviceNumbers

    /// The prepared statements of each entity, made on first use.
    private var plans: [String: EntityPlan] = [:]

    /// The buffer ``apply(id:plan:mayBeNew:merge:)`` merges a record's registers in.
    private var mergeBuffer: [Register] = []

    /// The buffer ``insert(_:_:)`` gathers a row's values in (kept to spare an allocation per insert).
    private var rowBuffer: [AttributeValue] = []

    /// The plan used last (most calls in a row are for one entity: comparing equal names is
    /// cheaper than hashing one).
    private var lastPlan: EntityPlan?

    func plan(_ entityName: String) throws(ManagedStoreError) -> EntityPlan {
        if let lastPlan, lastPlan.entity.name == entityName { return lastPlan }
        if let plan = plans[entityName] {
            lastPlan = plan
            return plan
        }
        let entity = try self.entity(entityName)
        let plan = try database { () throws(SQLiteError) in try EntityPlan(entity, connection: connection) }
        plans[entityName] = plan
        lastPlan = plan
        return plan
    }

    /// What applying one change did to the record's visibility.
    enum Effect: Sendable { case none, inserted, updated, deleted }

    /// Opens (creating) the store at `path` (`durable: false`, for tests, skips SQLite's flushes).
    ///
    /// - Throws: ``ManagedStoreError/invalidSchema(_:)``; ``ManagedStoreError/newerSchema(found:supported:)``
    ///   when a newer program wrote the store (it is left untouched);
    ///   ``ManagedStoreError/database(_:)`` when SQLite fails (not a database, damaged, no space).
    init(path: String, schema: ManagedSchema, device: String, durable: Bool = true,
         now: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallMilliseconds)
        throws(ManagedStoreError) {
        try schema.validate()
        self.schema = schema
        self.device = device
        do {
            connection = try SQLiteConnection(path: path, durable: durable)
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute(RecordTables.bookkeeping)
            if case .integer(let stored)? = try connection.rows("SELECT value FROM md_meta WHERE key = 'schemaVersion'").first?.first,
               stored > schema.version {
                try connection.execute("ROLLBACK")
                throw ManagedStoreError.newerSchema(found: Int(stored), supported: schema.version)
            }
            try RecordTables.create(schema, in: connection)
            try connection.run("INSERT OR REPLACE INTO md_meta (key, value) VALUES ('schemaVersion', ?)", [.integer(Int64(schema.version))])
            try connection.execute("COMMIT")
            devices = try DeviceNumbers(connection: connection)
        } catch let error as ManagedStoreError {
            throw error
        } catch let error as SQLiteError {
            throw .database(error)
        } catch {
            throw .unavailable(reason: "\(error)")
        }
        clock = HybridLogicalClock(device: device, now: now)
        if case .integer(let latest)? = try meta("clock") { clock.observe(HybridTimestamp(packed: UInt64(bitPattern: latest), device: "")) }
    }

    // MARK: Bookkeeping

    func meta(_ key: String) throws(ManagedStoreError) -> SQLiteValue? {
        try database { () throws(SQLiteError) in try connection.rows("SELECT value FROM md_meta WHERE key = ?", [.text(key)]).first?.first }
    }

    func setMeta(_ key: String, _ value: SQLiteValue) throws(ManagedStoreError) {
        try database { () throws(SQLiteError) in
            try connection.run("INSERT OR REPLACE INTO md_meta (key, value) VALUES (?, ?)", [.text(key), value])
        }
    }

    /// Runs SQLite work, turning its error into ``ManagedStoreError/database(_:)``.
    func database<T>(_ work: () throws(SQLiteError) -> T) throws(ManagedStoreError) -> T {
        do { return try work() } catch { throw .database(error) }
    }

    /// Opens the transaction local edits and imports write in, if none is open.
    func beginIfNeeded() throws(ManagedStoreError) {
        guard !connection.inTransaction else { return }
        try database { () throws(SQLiteError) in try connection.execute("BEGIN IMMEDIATE") }
    }

    /// Commits the open transaction with the clock's value (and whatever the caller wrote in it,
    /// e.g. the published log's name); forgets the pending changes.
    func commit() throws(ManagedStoreError) {
        guard connection.inTransaction else { pendingLog = PendingLog(); return }
        try setMeta("clock", .integer(Int64(bitPattern: clock.latest)))
        do { try connection.execute("COMMIT") } catch {
            // SQLite may have rolled the transaction back (a full disk, an I/O error).
            if !connection.inTransaction { try? devices.reload() }
            throw .database(error)
        }
        pendingLog = PendingLog()
        hasUncommittedImports = false
    }

    /// Writes the open transaction's pages into SQLite's WAL ahead of the commit, uncommitted
    /// (``SQLiteConnection/writeChangedPages()``): a save does it while its log is being flushed.
    func writeChangedPages() {
        guard connection.inTransaction else { return }
        connection.writeChangedPages()
    }

    /// Drops everything since the last commit: pending local changes and uncommitted imports.
    func rollback() {
        if connection.inTransaction { try? connection.execute("ROLLBACK") }
        try? devices.reload()  // numbers given in the rolled-back transaction are gone
        pendingLog = PendingLog()
        hasUncommittedImports = false
    }

    func markImported() { hasUncommittedImports = true }

    // MARK: Local changes

    /// Inserts a record of `entityName` with `values` (the others take their defaults).
    ///
    /// - Returns: its identifier: derived from the unique value for an entity with a unique
    ///   attribute (inserting the same value again is an update of that record, revived if it
    ///   was deleted), else a new random one.
    /// - Throws: ``ManagedStoreError/unknownEntity(_:)``, ``ManagedStoreError/unknownAttribute(entity:attribute:)``,
    ///   ``ManagedStoreError/invalidValue(entity:attribute:reason:)``, ``ManagedStoreError/database(_:)``.
    @discardableResult
    func insert(_ entityName: String, _ values: [String: AttributeValue]) throws(ManagedStoreError) -> ManagedObjectID {
        let plan = try self.plan(entityName)
        let entity = plan.entity
        // The values in the plan's column order, in a buffer kept from insert to insert: the
        // defaults, then each given value checked and put in its place.
        var row = rowBuffer
        rowBuffer = []  // (the buffer stays uniquely referenced: written in place)
        defer { rowBuffer = row }
        if row.count == plan.defaults.count {
            // Overwritten in place (the usual case: the same entity as the last insert).
            for position in row.indices { row[position] = plan.defaults[position] }
        } else {
            row.removeAll(keepingCapacity: true)
            row.append(contentsOf: plan.defaults)
        }
        for (name, value) in values {
            guard let position = plan.position(ofAttribute: name) else {
                throw .unknownAttribute(entity: entity.name, attribute: name)
            }
            try check(value, at: position, plan: plan, name: name)
            row[position] = value
        }
        if let unique = plan.uniquePosition {
            // The record the value names may exist: merged like any change.
            let value = values[plan.names[unique]] ?? .null
            guard value != .null else {
                throw .invalidValue(entity: entity.name, attribute: plan.names[unique], reason: "a unique attribute needs a value at insert")
            }
            let uuid = UniqueIdentity.id(entity: entity.name, uniqueValue: value)
            let stamp = clock.tick()
            var registers: [String: Register] = [:]
            for (position, name) in plan.names.enumerated() { registers[name] = Register(value: row[position], timestamp: stamp) }
            try recordLocal(RecordChange(entity: entity.name, id: uuid, registers: registers), mayBeNew: true)
            return ManagedObjectID(entity: entity.name, uuid: uuid)
        }
        // A new random identifier: no record to merge with, the values are the row.
        let uuid = RandomIdentifier.make()
        let stamp = clock.tick()
        try beginIfNeeded()
        let inserted = try database { () throws(SQLiteError) in try plan.insertRow(uuid, stamp: stamp, values: row, devices: devices) }
        if !inserted {
            // The same random identifier twice (practically never): merged like any change.
            var registers: [String: Register] = [:]
            for (position, name) in plan.names.enumerated() { registers[name] = Register(value: row[position], timestamp: stamp) }
            _ = try apply(RecordChange(entity: entity.name, id: uuid, registers: registers))
        }
        pendingLog.appendRow(plan: plan, id: uuid, stamp: stamp, values: row)
        return ManagedObjectID(entity: entity.name, uuid: uuid)
    }

    /// Checks one value given for register `position` of `plan` (named `name`).
    private func check(_ value: AttributeValue, at position: Int, plan: EntityPlan, name: String) throws(ManagedStoreError) {
        if let type = value.type, type != plan.types[position] {
            throw .invalidValue(entity: plan.entity.name, attribute: name, reason: "it is a \(plan.types[position]), not a \(type)")
        }
        if case .null = value, !plan.optional[position] {
            throw .invalidValue(entity: plan.entity.name, attribute: name, reason: "it is not optional")
        }
    }

    /// Sets `values` on the live record `id`.
    ///
    /// - Throws: ``ManagedStoreError/recordNotFound(_:)`` when it is not live here;
    ///   ``ManagedStoreError/uniqueAttributeImmutable(entity:attribute:)`` when `values` changes
    ///   the unique attribute; the errors of ``insert(_:_:)``.
    func update(_ id: ManagedObjectID, _ values: [String: AttributeValue]) throws(ManagedStoreError) {
        let entity = try self.entity(id.entity)
        try check(values, for: entity)
        guard let current = try registers(of: id), current[RecordChange.existence]?.value == .bool(true) else {
            throw .recordNotFound(id.uuid)
        }
        if let unique = entity.uniqueAttribute, let value = values[unique.name], value != current[unique.name]?.value {
            throw .uniqueAttributeImmutable(entity: entity.name, attribute: unique.name)
        }
        guard !values.isEmpty else { return }
        let stamp = clock.tick()
        try recordLocal(RecordChange(entity: entity.name, id: id.uuid,
                                     registers: values.mapValues { Register(value: $0, timestamp: stamp) }))
    }

    /// Deletes the live record `id` (it stays as a tombstone; see ``MergeRules``).
    ///
    /// - Throws: ``ManagedStoreError/recordNotFound(_:)`` when it is not live here; ``ManagedStoreError/database(_:)``.
    func delete(_ id: ManagedObjectID) throws(ManagedStoreError) {
        _ = try entity(id.entity)
        guard let current = try registers(of: id), current[RecordChange.existence]?.value == .bool(true) else {
            throw .recordNotFound(id.uuid)
        }
        let stamp = clock.tick()
        try recordLocal(RecordChange(entity: id.entity, id: id.uuid,
                                     registers: [RecordChange.existence: Register(value: .bool(false), timestamp: stamp)]))
    }

    private func recordLocal(_ change: RecordChange, mayBeNew: Bool = false) throws(ManagedStoreError) {
        try beginIfNeeded()
        _ = try apply(change, mayBeNew: mayBeNew)
        pendingLog.append(change)
    }

    func entity(_ name: String) throws(ManagedStoreError) -> EntityDescription {
        guard let entity = schema.entity(named: name) else { throw .unknownEntity(name) }
        return entity
    }

    private func check(_ values: [String: AttributeValue], for entity: EntityDescription) throws(ManagedStoreError) {
        for (name, value) in values {
            guard let attribute = entity.attribute(named: name) else {
                throw .unknownAttribute(entity: entity.name, attribute: name)
            }
            if let type = value.type, type != attribute.type {
                throw .invalidValue(entity: entity.name, attribute: name, reason: "it is a \(attribute.type), not a \(type)")
            }
            if value == .null && !attribute.isOptional {
                throw .invalidValue(entity: entity.name, attribute: name, reason: "it is not optional")
            }
        }
    }

    // MARK: Merging

    /// The registers of record `id`, live or tombstone; `nil` when the store never heard of it.
    func registers(of id: ManagedObjectID) throws(ManagedStoreError) -> [String: Register]? {
        let plan = try self.plan(id.entity)
        guard let registers = try database({ () throws(SQLiteError) in try plan.read(id.uuid, devices: devices) }) else { return nil }
        var named: [String: Register] = [:]
        for (position, register) in registers.enumerated() { named[plan.names[position]] = register }
        return named
    }

    /// Merges `change` into the store (inside the open transaction: call ``beginIfNeeded()``
    /// first). Registers of attributes the schema does not declare, or whose value is not of the
    /// declared type, are ignored (an older program's removed attribute, a damaged log); a
    /// change to an undeclared entity is ignored whole.
    ///
    /// `mayBeNew: false` (a local update or delete, of a record known to exist) goes straight to
    /// the read.
    func apply(_ change: RecordChange, mayBeNew: Bool = true) throws(ManagedStoreError) -> Effect {
        guard schema.entity(named: change.entity) != nil else { return .none }
        let plan = try self.plan(change.entity)
        return try apply(id: change.id, plan: plan, mayBeNew: mayBeNew) { self.merge(change, into: &$0, plan: plan) }
    }

    /// ``apply(_:mayBeNew:)`` for record `id` of `plan`'s entity, whose incoming registers
    /// `merge` merges into the registers it is given (in the plan's column order), saying
    /// whether any won.
    func apply(id: UUID, plan: EntityPlan, mayBeNew: Bool,
               merge: (inout [Register]) -> Bool) throws(ManagedStoreError) -> Effect {
        // The registers after the merge, in a buffer kept from change to change (an import
        // merges thousands): all unwritten to start with.
        var after = mergeBuffer
        mergeBuffer = []  // (the buffer stays uniquely referenced: written in place)
        defer { mergeBuffer = after }
        after.removeAll(keepingCapacity: true)
        after.append(contentsOf: repeatElement(Register.unwritten, count: plan.names.count))
        if mayBeNew {
            // First as a record new to the store (most of an import): merged into nothing and
            // inserted, without a read. If it exists, merged into what the store holds.
            _ = merge(&after)
            if try database({ () throws(SQLiteError) in try plan.insertIfAbsent(id, after, devices: devices) }) {
                return after[0].value == .bool(true) ? .inserted : .none
            }
        }
        guard let before = try database({ () throws(SQLiteError) in try plan.read(id, devices: devices) }) else {
            // Not there (only when `mayBeNew` is false, which the caller checked): as new.
            _ = merge(&after)
            try database { () throws(SQLiteError) in try plan.write(id, after, devices: devices) }
            return after[0].value == .bool(true) ? .inserted : .none
        }
        after = before
        let changed = merge(&after)
        guard changed else { return .none }
        try database { () throws(SQLiteError) in try plan.write(id, after, devices: devices) }
        let wasLive = before[0].value == .bool(true)
        let isLive = after[0].value == .bool(true)
        switch (wasLive, isLive) {
        case (false, true): return .inserted
        case (true, false): return .deleted
        case (true, true): return .updated
        case (false, false): return .none
        }
    }

    /// Merges the registers of `change` into `registers` (in `plan`'s column order), observing
    /// their timestamps; whether any won.
    private func merge(_ change: RecordChange, into registers: inout [Register], plan: EntityPlan) -> Bool {
        var changed = false
        for (name, incoming) in change.registers {
            guard let position = plan.index[name] else { continue }
            changed = merge(incoming, at: position, into: &registers, plan: plan) || changed
        }
        return changed
    }

    /// The same for a change as its file holds it: `positions` maps the file's name indices to
    /// the plan's columns (-1: not a register of this entity).
    func merge(_ change: IndexedChange, of file: IndexedLogFile, into registers: inout [Register], plan: EntityPlan,
               positions: [Int]) -> Bool {
        var changed = false
        for (name, incoming) in file.registers[change.registers] {
            let position = positions[name]
            guard position >= 0 else { continue }
            changed = merge(incoming, at: position, into: &registers, plan: plan) || changed
        }
        return changed
    }

    /// Merges one incoming register into column `position` (ignored if its value is not of the
    /// column's type, or a null existence); whether it won.
    private func merge(_ incoming: Register, at position: Int, into registers: inout [Register], plan: EntityPlan) -> Bool {
        if let valueType = incoming.value.type, valueType != plan.types[position] { return false }
        if position == 0 && incoming.value == .null { return false }
        clock.observe(incoming.timestamp)
        guard MergeRules.incomingWins(incoming.timestamp, over: registers[position].timestamp) else { return false }
        registers[position] = incoming
        return true
    }

    // MARK: Reading

    /// The live records `request` asks for.
    ///
    /// - Throws: ``ManagedStoreError/unknownEntity(_:)``, ``ManagedStoreError/unknownAttribute(entity:attribute:)``
    ///   (in the predicate or a sort key), ``ManagedStoreError/database(_:)``.
    func fetch(_ request: FetchRequest) throws(ManagedStoreError) -> [ManagedRecord] {
        let entity = try self.entity(request.entityName)
        var sql = "SELECT id, \(entity.attributes.map { RecordTables.quote($0.name) }.joined(separator: ", ")) FROM "
            + "\(RecordTables.table(entity.name)) WHERE \(RecordTables.quote(RecordChange.existence)) = 1"
        if entity.attributes.isEmpty { sql = sql.replacingOccurrences(of: "id, ", with: "id ") }
        var parameters: [SQLiteValue] = []
        if let predicate = request.predicate {
            let (clause, values) = try predicate.sql(for: entity)
            sql += " AND (\(clause))"
            parameters = values
        }
        var order: [String] = []
        for sort in request.sortDescriptors {
            guard entity.attribute(named: sort.key) != nil else { throw .unknownAttribute(entity: entity.name, attribute: sort.key) }
            order.append("\(RecordTables.quote(sort.key)) \(sort.ascending ? "ASC" : "DESC")")
        }
        sql += " ORDER BY " + (order + ["id"]).joined(separator: ", ")
        if let limit = request.fetchLimit { sql += " LIMIT \(max(0, limit))" }
        let rows = try database { () throws(SQLiteError) in try connection.rows(sql, parameters) }
        return rows.compactMap { row in
            guard let uuid = row.first.flatMap(RecordTables.uuid(from:)) else { return nil }
            var values: [String: AttributeValue] = [:]
            for (index, attribute) in entity.attributes.enumerated() where index + 1 < row.count {
                values[attribute.name] = AttributeValue(row[index + 1], as: attribute.type)
            }
            return ManagedRecord(objectID: ManagedObjectID(entity: entity.name, uuid: uuid), values: values)
        }
    }

    /// The number of live records of `entityName`.
    func count(_ entityName: String) throws(ManagedStoreError) -> Int {
        let entity = try self.entity(entityName)
        let rows = try database { () throws(SQLiteError) in
            try connection.rows("SELECT count(*) FROM \(RecordTables.table(entity.name)) WHERE \(RecordTables.quote(RecordChange.existence)) = 1")
        }
        if case .integer(let count)? = rows.first?.first { return Int(count) }
        return 0
    }

    /// Every record, live or tombstone, as changes carrying all their written registers (what a
    /// baseline holds), in identifier order.
    func allRecords() throws(ManagedStoreError) -> [RecordChange] {
        var changes: [RecordChange] = []
        for entity in schema.entities.sorted(by: { $0.name < $1.name }) {
            let rows = try database { () throws(SQLiteError) in
                try connection.rows("SELECT id FROM \(RecordTables.table(entity.name)) ORDER BY id")
            }
            for row in rows {
                guard let uuid = row.first.flatMap(RecordTables.uuid(from:)),
                      let registers = try registers(of: ManagedObjectID(entity: entity.name, uuid: uuid)) else { continue }
                changes.append(RecordChange(entity: entity.name, id: uuid, registers: registers.filter { $0.value.timestamp != .zero }))
            }
        }
        return changes
    }

    /// A text dump of every register of every record (live or not), in a fixed order: two stores
    /// holding the same data give the same dump.
    func dump() throws(ManagedStoreError) -> String {
        var lines: [String] = []
        for change in try allRecords() {
            let registers = change.registers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.value)@\($0.value.timestamp)" }
            lines.append("\(change.entity)/\(change.id.uuidString) " + registers.joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }
}
