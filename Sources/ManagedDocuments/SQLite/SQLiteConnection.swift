internal import CSQLite
import Foundation

/// One open SQLite database: a thin typed wrapper over the C API. Every failure is a thrown
/// ``SQLiteError`` carrying SQLite's result code; nothing here traps, whatever the file holds.
///
/// Opened in WAL mode with `synchronous = FULL` (a committed transaction survives a crash and a
/// power cut) and a busy timeout, so another connection's short write makes it wait, bounded,
/// instead of failing at once.
///
/// Not thread-safe (opened with `SQLITE_OPEN_NOMUTEX`): its owner serializes every use (the
/// ``RecordStore`` holds its lock around each one).
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: SQLiteStatement] = [:]

    /// SQLite's `SQLITE_TRANSIENT`: it copies bound text and blobs.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Opens (creating when `create`) the database at `path`. `durable: false` (tests and
    /// scratch stores only) skips the flushes: a crash of the machine may then lose commits.
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened or is not a database (the check
    ///   reads the schema, so `SQLITE_NOTADB` shows here, not later).
    init(path: String, create: Bool = true, durable: Bool = true, busyTimeoutMilliseconds: Int32 = 5_000) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: result, message: message, operation: "open \(path)")
        }
        self.handle = handle
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        do {
            try execute("PRAGMA journal_mode = WAL")
            try execute(durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = OFF")
            try execute("SELECT count(*) FROM sqlite_master")
        } catch {
            statements = [:]
            sqlite3_close_v2(handle)
            throw error
        }
    }

    deinit {
        statements = [:]
        sqlite3_close_v2(handle)
    }

    /// Runs `sql` (one or more statements, no parameters), ignoring rows.
    func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result, "run \(sql.prefix(120))") }
    }

    /// A prepared statement for `sql`, cached by its text.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let made = try SQLiteStatement(connection: self, sql: sql)
        statements[sql] = made
        return made
    }

    /// Runs `sql` with `values`, ignoring rows.
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) {
        try statement(sql).run(values)
    }

    /// Every row `sql` returns for `values`.
    func rows(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        try statement(sql).rows(values)
    }

    /// Writes the open write transaction's changed pages into the WAL now, as frames without a
    /// commit mark (`sqlite3_db_cacheflush`): nothing is committed, and until the commit's frame
    /// follows them neither other connections nor recovery after a crash use them. The commit
    /// then writes only what changed since (and its mark) before flushing the WAL. Best effort: a
    /// failure here is SQLite's to report at the commit.
    func writeChangedPages() {
        _ = sqlite3_db_cacheflush(handle)
    }

    /// Whether a transaction is open (`BEGIN` without its `COMMIT` or `ROLLBACK` yet).
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ result: Int32, _ operation: String) -> SQLiteError {
        let code = sqlite3_extended_errcode(handle)
        return SQLiteError(code: code != 0 ? code : result, message: String(cString: sqlite3_errmsg(handle)), operation: operation)
    }
}
