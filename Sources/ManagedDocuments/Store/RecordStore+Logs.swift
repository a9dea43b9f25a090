/// Applying other devices' logs and baselines, and the bookkeeping of which were applied.
extension RecordStore {
    /// Whether the file `name` was applied already.
    func hasApplied(_ name: String) throws(ManagedStoreError) -> Bool {
        try !database { () throws(SQLiteError) in try connection.rows("SELECT 1 FROM md_applied WHERE name = ?", [.text(name)]) }.isEmpty
    }

    /// Per device, the sequence up to which every log of the device was applied here (from a
    /// baseline's coverage, then each applied log following it without a gap).
    func coverage() throws(ManagedStoreError) -> [String: UInt64] {
        var covered: [String: UInt64] = [:]
        let baselines = try database { () throws(SQLiteError) in try connection.rows("SELECT device, sequence FROM md_coverage") }
        for row in baselines {
            if case .text(let device) = row[0], case .integer(let sequence) = row[1] { covered[device] = UInt64(max(0, sequence)) }
        }
        let applied = try database { () throws(SQLiteError) in
            try connection.rows("SELECT device, sequence FROM md_applied WHERE sequence > 0 ORDER BY device, sequence")
        }
        for row in applied {
            guard case .text(let device) = row[0], case .integer(let sequence) = row[1] else { continue }
            let current = covered[device] ?? 0
            if UInt64(sequence) == current + 1 { covered[device] = current + 1 }
        }
        return covered
    }

    /// Records that `name` (written by `device` with `sequence`; 0 for a baseline) was applied.
    func markApplied(_ name: String, device: String, sequence: UInt64) throws(ManagedStoreError) {
        try database { () throws(SQLiteError) in
            try connection.run("INSERT OR IGNORE INTO md_applied (name, device, sequence) VALUES (?, ?, ?)",
                               [.text(name), .text(device), .integer(Int64(clamping: sequence))])
        }
    }

    /// Whether applying a baseline with `coverage` could change anything here: it covers a log
    /// this store has not applied.
    func needsBaseline(covering coverage: [String: UInt64]) throws(ManagedStoreError) -> Bool {
        let mine = try self.coverage()
        return coverage.contains { device, sequence in sequence > (mine[device] ?? 0) }
    }

    /// Merges `file` (a log or baseline from any device, this one included) into the store,
    /// inside the open transaction (opened if needed), and records it applied as `name`.
    ///
    /// - Returns: what changed for the app.
    func applyFile(_ file: ChangeLogFile, name: String) throws(ManagedStoreError) -> ImportSummary {
        try beginIfNeeded()
        var effects = ImportEffects()
        for change in file.changes {
            let effect = try apply(change)
            effects.record(effect, for: ManagedObjectID(entity: change.entity, uuid: change.id))
        }
        try recordApplied(file, name: name)
        return effects.summary
    }

    /// ``applyFile(_:name:)`` for a file decoded with its name indices (the import's way): each
    /// entity's plan, and the column of each of the file's names, looked up once per file.
    func applyFile(_ indexed: IndexedLogFile, name: String) throws(ManagedStoreError) -> ImportSummary {
        try beginIfNeeded()
        var effects = ImportEffects()
        effects.reserve(indexed.changes.count)
        // Per entity name index: its plan and the column of each name index (-1: none); nil for
        // an entity the schema does not declare (its changes are ignored, as apply(_:) does).
        var targets: [Int: (plan: EntityPlan, positions: [Int])?] = [:]
        for change in indexed.changes {
            let target: (plan: EntityPlan, positions: [Int])?
            if let known = targets[change.entity] {
                target = known
            } else {
                let entityName = indexed.names[change.entity]
                if schema.entity(named: entityName) != nil {
                    let plan = try self.plan(entityName)
                    target = (plan, indexed.names.map { plan.index[$0] ?? -1 })
                } else {
                    target = nil
                }
                targets[change.entity] = .some(target)
            }
            guard let target else { continue }
            let effect = try apply(id: change.id, plan: target.plan, mayBeNew: true) { registers in
                self.merge(change, of: indexed, into: &registers, plan: target.plan, positions: target.positions)
            }
            effects.record(effect, for: ManagedObjectID(entity: target.plan.entity.name, uuid: change.id))
        }
        try recordApplied(indexed.file, name: name)
        return effects.summary
    }

    /// The bookkeeping of a file applied as `name`: applied, its coverage (a baseline's),
    /// what its writer had applied, the open transaction marked as holding imports.
    private func recordApplied(_ file: ChangeLogFile, name: String) throws(ManagedStoreError) {
        switch file.kind {
        case .log:
            try markApplied(name, device: file.device, sequence: file.sequence)
        case .baseline:
            try markApplied(name, device: file.device, sequence: 0)
            for (device, sequence) in file.coverage {
                try database { () throws(SQLiteError) in
                    try connection.run("""
                        INSERT INTO md_coverage (device, sequence) VALUES (?, ?)
                        ON CONFLICT(device) DO UPDATE SET sequence = max(sequence, excluded.sequence)
                        """, [.text(device), .integer(Int64(clamping: sequence))])
                }
            }
        }
        try notePeerCoverage(of: file)
        markImported()
    }

    /// Keeps what `file`'s writer said it had applied (compaction reads it: ``peerCoverage()``).
    func notePeerCoverage(of file: ChangeLogFile) throws(ManagedStoreError) {
        for (device, sequence) in file.coverage {
            try database { () throws(SQLiteError) in
                try connection.run("""
                    INSERT INTO md_peer_coverage (peer, device, sequence) VALUES (?, ?, ?)
                    ON CONFLICT(peer, device) DO UPDATE SET sequence = max(sequence, excluded.sequence)
                    """, [.text(file.device), .text(device), .integer(Int64(clamping: sequence))])
            }
        }
    }

    /// Per peer device, how far it said it had applied this device's logs.
    func peerCoverage(of device: String) throws(ManagedStoreError) -> [String: UInt64] {
        let rows = try database { () throws(SQLiteError) in
            try connection.rows("SELECT peer, sequence FROM md_peer_coverage WHERE device = ?", [.text(device)])
        }
        var result: [String: UInt64] = [:]
        for row in rows {
            if case .text(let peer) = row[0], case .integer(let sequence) = row[1] { result[peer] = UInt64(max(0, sequence)) }
        }
        return result
    }
}
