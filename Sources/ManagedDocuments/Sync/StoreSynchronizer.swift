import FileCoordination
import Foundation

/// The engine of a managed document: its local ``RecordStore`` and its ``LogFolder`` in the
/// container, and the three things that move changes between them — save (publish a log, then
/// commit), import (apply the other devices' new files) and baseline (publish the whole store,
/// then compact).
///
/// Thread-safe: every use of the store holds ``state``'s lock (`Locked`), so the context's
/// calls on the main actor, saves on the document's file-access queue and imports on the import
/// timer's queue are serialized. No lock is held while calling out.
///
/// Crash consistency: a save writes its log (a new file, flushed) *before* it commits the local
/// transaction that records the log as applied. A crash between the two leaves a log the local
/// store does not have; the next import finds this device's own unapplied log and applies it
/// (merging is idempotent), so the store and the logs agree again. A crash before the log is
/// renamed into place leaves only a temporary file (removed by the first write of the next
/// process) and the local store as at the last save. SQLite may write a save's pages into its WAL
/// while the log is being flushed, but only as frames without a commit mark, which neither other
/// connections nor SQLite's recovery use: the commit itself still follows the log.
final class StoreSynchronizer: Sendable {
    struct State {
        var store: RecordStore
        /// Failures already reported, by file key and size (a file that changes is tried again).
        var reported: Set<String> = []
        /// Files known to be applied or unusable as they are (skips the store lookups).
        var settled: Set<String> = []
        /// Whether this process has written a file yet (its first write removes the temporary
        /// files a killed write left).
        var hasWritten = false
        /// Whether its document closed (``stop()``): the context, which keeps the synchronizer
        /// between changes, then looks the document's current one up again.
        var isStopped = false
    }

    /// The store and what imports remember, behind one lock (`Locked` is Sendable: the
    /// RecordStore inside, which is not, is only touched with the lock held).
    let state: Locked<State>
    let folder: LogFolder?
    let schema: ManagedSchema
    let device: String
    /// A baseline is published after this many of this device's logs since the last one.
    let baselineInterval: UInt64
    /// Where a save writes and flushes its log while the store writes its pages (``save()``).
    private let logQueue = DispatchQueue(label: "ManagedDocs.logWrite")

    /// Opens the store at `storePath`; `folder` is `nil` for a store that is not synced.
    ///
    /// - Throws: what ``RecordStore/init(path:schema:device:durable:now:)`` throws.
    init(storePath: String, schema: ManagedSchema, device: String, folder: LogFolder?, durable: Bool = true,
         baselineInterval: UInt64 = 100,
         now: @escaping @Sendable () -> UInt64 = HybridLogicalClock.wallMilliseconds)
        throws(ManagedStoreError) {
        let store = try RecordStore(path: storePath, schema: schema, device: device, durable: durable, now: now)
        state = Locked(State(store: store))
        self.folder = folder
        self.schema = schema
        self.device = device
        self.baselineInterval = max(1, baselineInterval)
        folder?.prepare()
    }

    /// Runs `body` with the store, holding the lock.
    func withStore<T>(_ body: (RecordStore) throws(ManagedStoreError) -> T) throws(ManagedStoreError) -> T {
        try state.withLock { (state: inout State) throws(ManagedStoreError) -> T in try body(state.store) }
    }

    /// ``withStore(_:)`` while the document that opened this synchronizer still has it open:
    /// `nil` (`body` not run) once ``stop()`` was called.
    func withOpenStore<T>(_ body: (RecordStore) throws(ManagedStoreError) -> T) throws(ManagedStoreError) -> T? {
        try state.withLock { (state: inout State) throws(ManagedStoreError) -> T? in
            state.isStopped ? nil : try body(state.store)
        }
    }

    /// Marks the synchronizer as no longer its document's (the document closed): ``withOpenStore(_:)``
    /// runs nothing from now on. Other calls (a save or import already under way) still work.
    func stop() {
        state.withLock { $0.isStopped = true }
    }

    var hasUnsavedChanges: Bool { state.withLock { $0.store.hasPendingChanges || $0.store.hasUncommittedImports } }

    // MARK: Save

    /// Publishes the local changes since the last save as one change log, then commits them
    /// (with any imports waiting in the same transaction). Publishes a baseline and compacts when
    /// ``baselineInterval`` logs were written since the last baseline.
    ///
    /// - Returns: the failures of the baseline or compaction (reported, not fatal).
    /// - Throws: ``ManagedStoreError/writeFailed(path:errno:)`` when the log cannot be written
    ///   (the changes stay unsaved: the transaction stays open, the next save tries again);
    ///   ``ManagedStoreError/database(_:)``.
    @discardableResult
    func save() throws(ManagedStoreError) -> [ManagedStoreError] {
        try state.withLock { (state: inout State) throws(ManagedStoreError) -> [ManagedStoreError] in
            let store = state.store
            guard store.hasPendingChanges else {
                try store.commit()
                return []
            }
            guard let folder else {
                try store.commit()
                return []
            }
            let sequence = try self.sequence(store) + 1
            var coverage = try store.coverage()
            coverage[device] = sequence
            let file = ChangeLogFile(kind: .log, schemaVersion: schema.version, device: device, sequence: sequence,
                                     writtenMilliseconds: store.clock.now(), coverage: coverage, changes: [])
            let pieces = file.encodedPieces(pending: store.pendingLog)
            // The log is written, flushed, renamed into place and its folder flushed on the log
            // queue, while SQLite writes this save's pages into its WAL as frames without a commit
            // mark (nothing committed: a crash now leaves the store as at the last save). Only
            // once the log is in place does the commit below add its mark and flush the WAL.
            let name = LogFolder.newFileName(kind: .log, sequence: sequence)
            let removingStaleTemporaries = !state.hasWritten
            let writing = BackgroundWrite(on: logQueue) { () throws(ManagedStoreError) -> LogFolder.Entry in
                try folder.write(pieces: [pieces.head, pieces.body, pieces.tail], named: name, kind: .log, sequence: sequence,
                                 removingStaleTemporaries: removingStaleTemporaries)
            }
            store.writeChangedPages()
            let entry = try writing.wait()
            state.hasWritten = true
            try store.markApplied(entry.key, device: device, sequence: sequence)
            try store.setMeta("sequence", .integer(Int64(clamping: sequence)))
            try store.setMeta("lastPublished", .text(entry.key))
            try store.commit()
            state.settled.insert(entry.key)
            let lastBaseline: UInt64 = if case .integer(let value)? = try store.meta("baselineSequence") { UInt64(max(0, value)) } else { 0 }
            guard sequence >= lastBaseline + baselineInterval else { return [] }
            do throws(ManagedStoreError) {
                try publishBaseline(&state)
                try compact(&state)
                return []
            } catch {
                return [error]
            }
        }
    }

    func sequence(_ store: RecordStore) throws(ManagedStoreError) -> UInt64 {
        if case .integer(let value)? = try store.meta("sequence") { return UInt64(max(0, value)) }
        return 0
    }

    // MARK: Baselines and compaction

    /// Publishes the whole store as a baseline (after committing what is committed: call it
    /// with no unsaved local changes), then deletes what it makes unnecessary.
    ///
    /// - Throws: ``ManagedStoreError/writeFailed(path:errno:)``, ``ManagedStoreError/database(_:)``.
    func publishBaseline() throws(ManagedStoreError) {
        try state.withLock { (state: inout State) throws(ManagedStoreError) in
            try publishBaseline(&state)
            try compact(&state)
        }
    }

    private func publishBaseline(_ state: inout State) throws(ManagedStoreError) {
        guard let folder else { return }
        let store = state.store
        guard !store.hasPendingChanges else { return }
        let sequence = try self.sequence(store)
        var coverage = try store.coverage()
        coverage[device] = sequence
        let file = ChangeLogFile(kind: .baseline, schemaVersion: schema.version, device: device, sequence: sequence,
                                 writtenMilliseconds: store.clock.now(), coverage: coverage, changes: try store.allRecords())
        let entry = try folder.write(file.encoded(), kind: .baseline, sequence: sequence, removingStaleTemporaries: !state.hasWritten)
        state.hasWritten = true
        try store.beginIfNeeded()
        try store.markApplied(entry.key, device: device, sequence: 0)
        try store.setMeta("lastPublished", .text(entry.key))
        try store.setMeta("baselineSequence", .integer(Int64(clamping: sequence)))
        try store.commit()
        state.settled.insert(entry.key)
    }

    /// Deletes this device's files nobody needs any more: its baselines older than its newest,
    /// and its logs that the newest baseline contains *and* every other device (one with a
    /// folder here) has said it applied. Never deletes the newest file this device published
    /// (reset detection looks for it), nor another device's files.
    private func compact(_ state: inout State) throws(ManagedStoreError) {
        guard let folder, let entries = folder.entries() else { return }
        let mine = entries.filter { $0.device == device }
        guard let newestBaseline = mine.filter({ $0.kind == .baseline }).max(by: { $0.sequence < $1.sequence || ($0.sequence == $1.sequence && $0.fileName < $1.fileName) }) else { return }
        let lastPublished: String? = if case .text(let key)? = try state.store.meta("lastPublished") { key } else { nil }
        let peers = Set(entries.map(\.device)).subtracting([device])
        let acknowledged = try state.store.peerCoverage(of: device)
        let everyoneHas = peers.map { acknowledged[$0] ?? 0 }.min() ?? UInt64.max
        let limit = min(newestBaseline.sequence, everyoneHas)
        for entry in mine where entry.key != lastPublished && entry != newestBaseline {
            switch entry.kind {
            case .baseline: folder.remove(entry)
            case .log where entry.sequence <= limit: folder.remove(entry)
            case .log: break
            }
        }
    }

    // MARK: Import

    /// Applies every log and baseline in the container this store has not applied yet (other
    /// devices', and this device's own after a crash between writing a log and committing it),
    /// and detects a reset container.
    ///
    /// Each file is applied whole or not at all. A damaged or truncated file is skipped and
    /// reported (once, until it changes) and the rest applied; a file from a newer schema is
    /// kept and reported; neither stops the others. The imported changes are committed, unless
    /// local changes are unsaved: then they join the open transaction and the next save commits
    /// them (``SyncOutcome/joinedUnsavedChanges``).
    func importChanges() -> SyncOutcome {
        state.withLock { state in
            var outcome = SyncOutcome()
            guard let folder else { return outcome }
            let entries = folder.entries() ?? []
            do throws(ManagedStoreError) {
                if let reset = try detectReset(entries, &state) { outcome.failures.append(reset) }
            } catch {
                outcome.failures.append(error)
            }
            // Baselines first: logs they cover need not be read.
            let ordered = entries.filter { !state.settled.contains($0.key) }.sorted {
                ($0.kind == .baseline ? 0 : 1, $0.device, $0.sequence, $0.fileName) < ($1.kind == .baseline ? 0 : 1, $1.device, $1.sequence, $1.fileName)
            }
            var effects = ImportEffectsAccumulator()
            // What this store covers, read once per pass and again after each baseline applied
            // (a stale value only means reading a log a baseline already brought: still correct).
            var coverage = (try? state.store.coverage()) ?? [:]
            for entry in ordered {
                do throws(ManagedStoreError) {
                    if let summary = try importFile(entry, folder: folder, coverage: coverage, &state) { effects.add(summary) }
                    if entry.kind == .baseline { coverage = try state.store.coverage() }
                } catch {
                    let key = "\(entry.key)#\(error)"
                    if !state.reported.contains(key) {
                        state.reported.insert(key)
                        outcome.failures.append(error)
                    }
                }
            }
            outcome.summary = effects.summary
            let store = state.store
            if !store.hasPendingChanges {
                do throws(ManagedStoreError) { try store.commit() } catch {
                    store.rollback()
                    state.settled = []
                    outcome.summary = ImportSummary()
                    outcome.failures.append(error)
                }
            } else if store.hasUncommittedImports {
                outcome.joinedUnsavedChanges = true
            }
            return outcome
        }
    }

    /// Applies one file; `nil` when it needed nothing.
    private func importFile(_ entry: LogFolder.Entry, folder: LogFolder, coverage: [String: UInt64],
                            _ state: inout State) throws(ManagedStoreError) -> ImportSummary? {
        let store = state.store
        if try store.hasApplied(entry.key) {
            state.settled.insert(entry.key)
            return nil
        }
        // A log a baseline already brought (every log of its device up to it applied): only
        // remembered.
        if entry.kind == .log, entry.device != device, entry.sequence <= coverage[entry.device] ?? 0 {
            try store.beginIfNeeded()
            try store.markApplied(entry.key, device: entry.device, sequence: entry.sequence)
            store.markImported()
            state.settled.insert(entry.key)
            return nil
        }
        let bytes = try folder.read(entry)
        let indexed: IndexedLogFile
        do { indexed = try ChangeLogFile.decodeIndexed(bytes) } catch {
            throw .unreadableLog(path: folder.url(of: entry).path, reason: error.reason)
        }
        let file = indexed.file
        guard file.schemaVersion <= schema.version else {
            throw .logFromNewerSchema(path: folder.url(of: entry).path, found: file.schemaVersion, supported: schema.version)
        }
        if file.kind == .baseline, !(try store.needsBaseline(covering: file.coverage)) {
            try store.beginIfNeeded()
            try store.markApplied(entry.key, device: entry.device, sequence: 0)
            try store.notePeerCoverage(of: file)
            store.markImported()
            state.settled.insert(entry.key)
            return nil
        }
        let summary = try store.applyFile(indexed, name: entry.key)
        if entry.device == device, entry.kind == .log, entry.sequence > (try sequence(store)) {
            // Our own log from before a crash: never reuse its sequence.
            try store.setMeta("sequence", .integer(Int64(clamping: entry.sequence)))
        }
        state.settled.insert(entry.key)
        return summary
    }

    /// Whether the newest file this device published is gone (the container or the store's
    /// folder was reset or emptied): then publishes the whole store again as a baseline.
    private func detectReset(_ entries: [LogFolder.Entry], _ state: inout State) throws(ManagedStoreError) -> ManagedStoreError? {
        guard let folder, case .text(let key)? = try state.store.meta("lastPublished") else { return nil }
        guard !entries.contains(where: { $0.key == key }) else { return nil }
        guard !state.store.hasPendingChanges else { return nil }  // after the next save
        try state.store.commit()
        try publishBaseline(&state)
        return .containerReset(path: folder.root.path)
    }
}

/// Adds up the summaries of several files (a record inserted by one and deleted by a later one
/// is neither).
struct ImportEffectsAccumulator {
    private var summary_ = ImportSummary()

    mutating func add(_ next: ImportSummary) {
        if summary_.isEmpty {
            summary_ = next  // the first file (usually the only one): nothing to fold
            return
        }
        for id in next.inserted {
            if summary_.deleted.remove(id) != nil { summary_.updated.insert(id) } else { summary_.inserted.insert(id) }
        }
        for id in next.updated where !summary_.inserted.contains(id) { summary_.updated.insert(id) }
        for id in next.deleted {
            if summary_.inserted.remove(id) == nil {
                summary_.updated.remove(id)
                summary_.deleted.insert(id)
            }
        }
    }

    var summary: ImportSummary { summary_ }
}
