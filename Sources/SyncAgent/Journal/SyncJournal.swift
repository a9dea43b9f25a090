import FileCoordination
import Foundation
import Glibc

/// The crash-safe memory of one container's sync: per item the common base (``JournalEntry``),
/// the agent's conflict versions (``JournalConflict``) and the server's identity.
///
/// **On disk** (a folder outside the container, `ROOT/.clouddocsd/journal/IDENTIFIER/`):
/// - `snapshot`: every current record, written whole by ``compact()``;
/// - `log`: the records written since, appended.
/// Both are sequences of frames (``JournalFraming``: length, CRC-32, JSON payload). Loading
/// applies the snapshot then the log; the first torn or garbled frame ends a file (a `kill -9` or
/// power cut in the middle of an append loses at most that record), and the log is cut there so
/// later appends follow valid frames. Compaction writes `snapshot.tmp`, `fsync`s it, renames it
/// over `snapshot`, `fsync`s the folder, then empties the log: a crash at any step leaves either
/// the old snapshot with the full log, or the new snapshot with a log whose records it already
/// contains (replaying them gives the same state).
///
/// **Memory**: the entries (about 200 bytes each: 2 MB for 10,000 items); the log is compacted
/// when it holds more records than `max(1024, entries)`.
///
/// Not thread-safe: one owner (the container's ``SyncEngine`` actor) uses it.
public final class SyncJournal {
    public let folder: URL
    public private(set) var entries: [String: JournalEntry] = [:]
    public private(set) var conflicts: [String: JournalConflict] = [:]
    public private(set) var server = JournalServerIdentity(rootFileID: nil)
    /// Server-side renames started and not finished, by private path (``JournalPendingMove``).
    public private(set) var pendingMoves: [String: JournalPendingMove] = [:]
    private var logDescriptor: Int32 = -1
    private var logRecordCount = 0
    /// Whether appends are flushed with `fdatasync` (tests of the format may turn it off).
    public var flushesAppends = true

    private var logPath: String { folder.appending(path: "log").path }
    private var snapshotPath: String { folder.appending(path: "snapshot").path }

    /// Opens (creating when missing) the journal in `folder`.
    /// - Throws: ``JournalError`` when the folder or its files cannot be created, read or opened.
    public init(folder: URL) throws(JournalError) {
        self.folder = folder
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code
            throw JournalError(operation: "create folder", path: folder.path, errno: Errno(Int32(code ?? Int(EACCES))))
        }
        POSIXFile.removeQuietly(snapshotPath + ".tmp")
        if let snapshot = try POSIXFile.readAll(snapshotPath) {
            apply(JournalFraming.payloads(in: snapshot).payloads)
        }
        let log = try POSIXFile.readAll(logPath) ?? Data()
        let (payloads, validLength) = JournalFraming.payloads(in: log)
        apply(payloads)
        logRecordCount = payloads.count
        logDescriptor = open(logPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard logDescriptor >= 0 else { throw JournalError(operation: "open", path: logPath, errno: .current) }
        if validLength != log.count {
            guard ftruncate(logDescriptor, off_t(validLength)) == 0 else {
                let failure = Errno.current
                close(logDescriptor)
                throw JournalError(operation: "cut the torn end of", path: logPath, errno: failure)
            }
        }
        guard lseek(logDescriptor, off_t(validLength), SEEK_SET) >= 0 else {
            let failure = Errno.current
            close(logDescriptor)
            throw JournalError(operation: "seek", path: logPath, errno: failure)
        }
    }

    deinit { if logDescriptor >= 0 { close(logDescriptor) } }

    // MARK: Changes

    /// Records `entry` (replacing the one at its path). Durable when this returns.
    public func put(_ entry: JournalEntry) throws(JournalError) { try append([.put(entry)]) }

    /// Records several entries in one write (one flush).
    public func put(_ newEntries: [JournalEntry]) throws(JournalError) {
        guard !newEntries.isEmpty else { return }
        try append(newEntries.map { .put($0) })
    }

    /// Forgets the item at `path` (and, for a folder, nothing else: callers remove children).
    public func remove(path: String) throws(JournalError) { try append([.remove(path: path)]) }

    /// Records a conflict version shared through the server's conflict area (flushed before it
    /// returns). Throws ``JournalError`` when the log cannot be written; then nothing was recorded.
    public func putConflict(_ conflict: JournalConflict) throws(JournalError) { try append([.putConflict(conflict)]) }

    /// Forgets a conflict version (flushed before it returns). Throws ``JournalError`` when the log
    /// cannot be written; then nothing changed.
    public func removeConflict(remotePath: String) throws(JournalError) { try append([.removeConflict(remotePath: remotePath)]) }

    /// Records a server-side rename about to start (flushed before it returns). Throws
    /// ``JournalError`` when the log cannot be written; then the rename must not start.
    public func putPendingMove(_ move: JournalPendingMove) throws(JournalError) { try append([.putPendingMove(move)]) }

    /// Forgets a finished server-side rename (flushed before it returns).
    public func removePendingMove(privatePath: String) throws(JournalError) {
        try append([.removePendingMove(privatePath: privatePath)])
    }

    /// Records the server's identity (its root's file id) (flushed before it returns). Throws
    /// ``JournalError`` when the journal cannot be written; the identity is then not recorded.
    public func setServer(_ identity: JournalServerIdentity) throws(JournalError) { try append([.server(identity)]) }

    /// Forgets everything (a new server): written as a new, empty snapshot.
    public func reset() throws(JournalError) {
        entries = [:]
        conflicts = [:]
        pendingMoves = [:]
        try compact()
    }

    private func append(_ records: [JournalRecord]) throws(JournalError) {
        var data = Data()
        let encoder = JSONEncoder()
        for record in records {
            guard let payload = try? encoder.encode(record) else { continue }
            data.append(JournalFraming.frame(payload))
        }
        let start = lseek(logDescriptor, 0, SEEK_CUR)
        guard start >= 0 else { throw JournalError(operation: "seek", path: logPath, errno: .current) }
        do throws(JournalError) {
            try POSIXFile.writeAll(data, to: logDescriptor, path: logPath)
            if flushesAppends, fdatasync(logDescriptor) != 0 {
                throw JournalError(operation: "flush", path: logPath, errno: .current)
            }
        } catch {
            // A write that failed part-way (ENOSPC, EIO) may have left a torn frame: cut the log
            // back to where this append began, so later appends follow valid frames.
            rollBackLog(to: start)
            throw error
        }
        apply(records)
        logRecordCount += records.count
        if logRecordCount > max(1024, entries.count + conflicts.count) { try compact() }
    }

    /// Cuts the log back to `offset` (the end before a failed append) and seeks there. Best
    /// effort: if even that fails, loading still stops at the torn frame.
    private func rollBackLog(to offset: off_t) {
        _ = ftruncate(logDescriptor, offset)
        _ = lseek(logDescriptor, offset, SEEK_SET)
    }

    // MARK: Compaction

    /// Writes every current record to a new snapshot and empties the log (see the type's
    /// documentation for why a crash at any step is safe).
    public func compact() throws(JournalError) {
        var records: [JournalRecord] = [.server(server)]
        records += entries.keys.sorted().compactMap { entries[$0].map(JournalRecord.put) }
        records += conflicts.keys.sorted().compactMap { conflicts[$0].map(JournalRecord.putConflict) }
        records += pendingMoves.keys.sorted().compactMap { pendingMoves[$0].map(JournalRecord.putPendingMove) }
        let encoder = JSONEncoder()
        let temporary = snapshotPath + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw JournalError(operation: "create", path: temporary, errno: .current) }
        do throws(JournalError) {
            var buffer = Data()
            for record in records {
                guard let payload = try? encoder.encode(record) else { continue }
                buffer.append(JournalFraming.frame(payload))
                if buffer.count >= 1 << 16 {
                    try POSIXFile.writeAll(buffer, to: descriptor, path: temporary)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try POSIXFile.writeAll(buffer, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw JournalError(operation: "flush", path: temporary, errno: .current) }
        } catch {
            close(descriptor)
            POSIXFile.removeQuietly(temporary)
            throw error
        }
        close(descriptor)
        guard Glibc.rename(temporary, snapshotPath) == 0 else {
            let failure = Errno.current
            POSIXFile.removeQuietly(temporary)
            throw JournalError(operation: "rename snapshot", path: snapshotPath, errno: failure)
        }
        try POSIXFile.syncFolder(folder.path)
        guard ftruncate(logDescriptor, 0) == 0, lseek(logDescriptor, 0, SEEK_SET) >= 0 else {
            throw JournalError(operation: "empty", path: logPath, errno: .current)
        }
        if flushesAppends { _ = fdatasync(logDescriptor) }
        logRecordCount = 0
    }

    // MARK: Applying records

    private func apply(_ payloads: [Data]) {
        let decoder = JSONDecoder()
        var records: [JournalRecord] = []
        for payload in payloads {
            // A checksummed record that does not decode (a future format) ends the readable part.
            guard let record = try? decoder.decode(JournalRecord.self, from: payload) else { break }
            records.append(record)
        }
        apply(records)
    }

    private func apply(_ records: [JournalRecord]) {
        for record in records {
            switch record {
            case .put(let entry): entries[entry.path] = entry
            case .remove(let path): entries[path] = nil
            case .putConflict(let conflict): conflicts[conflict.remotePath] = conflict
            case .removeConflict(let remotePath): conflicts[remotePath] = nil
            case .server(let identity): server = identity
            case .putPendingMove(let move): pendingMoves[move.privatePath] = move
            case .removePendingMove(let privatePath): pendingMoves[privatePath] = nil
            }
        }
    }
}
