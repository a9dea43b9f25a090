internal import CSQLite
import Foundation

/// A prepared statement of one ``SQLiteConnection``. Not thread-safe: used by whoever owns the
/// connection (see ``SQLiteConnection``). Finalized when released.
final class SQLiteStatement {
    private let handle: OpaquePointer
    /// Unowned: the connection caches its statements (``SQLiteConnection/statement(_:)``), so a
    /// strong reference back made a cycle that kept every connection — its file descriptors
    /// and SQLite's memory — alive after its store was closed. A statement is used only while
    /// its connection's owner holds both; its deinit touches only its own handle (SQLite's
    /// `sqlite3_close_v2` lets statements be finalized after the close).
    private unowned let connection: SQLiteConnection
    let sql: String

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else {
            if let statement { sqlite3_finalize(statement) }
            throw connection.error(result, "prepare \(sql.prefix(120))")
        }
        self.handle = statement
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `values` to the parameters 1… (after resetting the statement).
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let result: Int32
        switch value {
        case .null: result = sqlite3_bind_null(handle, index)
        case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
        case .real(let number): result = sqlite3_bind_double(handle, index, number)
        case .text(let text): result = sqlite3_bind_text(handle, index, text, -1, SQLiteConnection.transient)
        case .blob(let data):
            result = data.withUnsafeBytes { bytes in
                // A zero-length blob is bound as an empty blob, not NULL.
                sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count),
                                  SQLiteConnection.transient)
            }
        }
        guard result == SQLITE_OK else { throw connection.error(result, "bind parameter \(index) of \(sql.prefix(80))") }
    }

    /// Binds a UUID as its 16 bytes (a blob): how the store keeps record identifiers.
    func bind(_ uuid: UUID, at index: Int32) throws(SQLiteError) {
        var bytes = uuid.uuid
        let result = withUnsafeBytes(of: &bytes) { raw in
            sqlite3_bind_blob(handle, index, raw.baseAddress, 16, SQLiteConnection.transient)
        }
        guard result == SQLITE_OK else { throw connection.error(result, "bind parameter \(index) of \(sql.prefix(80))") }
    }

    /// Binds a 64-bit integer (the common case of the store's hot paths, without an enum).
    func bind(_ number: Int64, at index: Int32) throws(SQLiteError) {
        let result = sqlite3_bind_int64(handle, index, number)
        guard result == SQLITE_OK else { throw connection.error(result, "bind parameter \(index) of \(sql.prefix(80))") }
    }

    /// The UUID in column `index` of the current row: a 16-byte blob, or (in a store of an
    /// earlier development version) its text form; `nil` for anything else.
    func uuid(at index: Int32) -> UUID? {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_BLOB:
            guard sqlite3_column_bytes(handle, index) == 16, let bytes = sqlite3_column_blob(handle, index) else { return nil }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16)) }
            return UUID(uuid: uuid)
        case SQLITE_TEXT:
            if case .text(let text) = value(at: index) { return UUID(uuidString: text) }
            return nil
        default:
            return nil
        }
    }

    /// The integer in column `index` of the current row (0 for NULL; SQLite converts others).
    func integer(at index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Whether column `index` of the current row is NULL.
    func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Resets the statement (keeping its bindings), so it can run again.
    func reset() { sqlite3_reset(handle) }

    /// Runs one step: `true` when a row is available (read it with ``value(at:)``), `false` when done.
    func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let failure = connection.error(result, "run \(sql.prefix(120))")
            sqlite3_reset(handle)
            throw failure
        }
    }

    /// Binds `values` and runs the statement to its end, ignoring rows.
    func run(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Binds `values` and returns every row.
    func rows(_ values: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        try bind(values)
        var rows: [[SQLiteValue]] = []
        let count = sqlite3_column_count(handle)
        while try step() {
            rows.append((0..<count).map { value(at: $0) })
        }
        sqlite3_reset(handle)
        return rows
    }

    /// The value of column `index` of the current row.
    func value(at index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, index))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, index))
            guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }
}
