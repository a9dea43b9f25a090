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
        return effects.summary
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
