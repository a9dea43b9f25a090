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

    deinit {
        sqlite3_finalize(handle)
        identifierBytes.deallocate()
        textArena.deallocate()
    }

    /// Where text values bound since the last ``reset()`` are copied, SQLite reading them in
    /// place (`SQLITE_STATIC`) instead of allocating a copy of each per bind. Only ever grown in
    /// ``reset()``, after the bindings are cleared, so no binding points into freed memory; a
    /// text that does not fit meanwhile is bound as SQLite's own copy.
    private var textArena = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
    private var textArenaCapacity = 256
    private var textArenaUsed = 0
    /// The arena size the texts of one row wanted (grown to at the next reset).
    private var textArenaWanted = 0
    /// Rows with more text than this bind it as SQLite's copies (the arena stays small).
    static let largestTextArena = 64 * 1024

    /// Where ``bindIdentifier(_:)`` puts the record identifier it binds: SQLite reads it in
    /// place (`SQLITE_STATIC`) instead of copying it into memory of its own per bind. Lives as
    /// long as the statement (finalized first), rewritten only by the next bind.
    private let identifierBytes = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)

    /// Binds `uuid` as its 16 bytes to parameter 1, without SQLite copying them (see
    /// ``identifierBytes``): the hot statements' key.
    func bindIdentifier(_ uuid: UUID) throws(SQLiteError) {
        identifierBytes.storeBytes(of: uuid.uuid, as: uuid_t.self)
        let result = sqlite3_bind_blob(handle, 1, identifierBytes, 16, nil)
        guard result == SQLITE_OK else { throw connection.error(result, "bind parameter 1 of \(sql.prefix(80))") }
    }

    /// Binds `values` to the parameters 1… (after resetting the statement).
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        reset()
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
        case .text(let text):
            try bind(AttributeValue.string(text), at: index)  // by its length: a string holding NUL is kept whole
            return
        case .blob(let data):
            result = data.withUnsafeBytes { bytes in
                // A zero-length blob is bound as an empty blob, not NULL.
                sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count),
                                  SQLiteConnection.transient)
            }
        }
        guard result == SQLITE_OK else { throw connection.error(result, "bind parameter \(index) of \(sql.prefix(80))") }
    }

    /// Binds an attribute value as the store keeps it (``AttributeValue/sqliteValue``), without
    /// the intermediate value for the common types.
    func bind(_ value: AttributeValue, at index: Int32) throws(SQLiteError) {
        let result: Int32
        switch value {
        case .null: result = sqlite3_bind_null(handle, index)
        case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
        case .bool(let flag): result = sqlite3_bind_int64(handle, index, flag ? 1 : 0)
        case .double(let number): result = sqlite3_bind_double(handle, index, number)
        case .string(var text):
            result = text.withUTF8 { utf8 in
                let count = utf8.count
                // A zero-length string is bound as an empty text, not NULL.
                guard let base = utf8.baseAddress, count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, SQLiteConnection.transient)
                }
                textArenaWanted += count
                guard count <= textArenaCapacity - textArenaUsed else {
                    return sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                             Int32(clamping: count), SQLiteConnection.transient)
                }
                let copy = textArena + textArenaUsed
                copy.copyMemory(from: base, byteCount: count)
                textArenaUsed += count
                return sqlite3_bind_text(handle, index, copy.assumingMemoryBound(to: CChar.self), Int32(count), nil)
            }
        default:
            try bind(value.sqliteValue, at: index)
            return
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

    /// Calls `body` with the bytes of the blob in column `index` of the current row (empty for
    /// NULL or an empty blob; SQLite converts other classes), valid only during the call.
    func withBlob<T>(at index: Int32, _ body: (UnsafeRawBufferPointer) -> T) -> T {
        let bytes = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let bytes, count > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Whether column `index` of the current row is NULL.
    func isNull(at index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    /// Resets the statement (keeping its bindings), so it can run again.
    func reset() {
        sqlite3_reset(handle)
        textArenaUsed = 0
        if textArenaWanted > textArenaCapacity && textArenaWanted <= Self.largestTextArena {
            // Grown for rows like the last one, once no binding points into the old arena.
            sqlite3_clear_bindings(handle)
            textArena.deallocate()
            textArenaCapacity = max(textArenaWanted, 2 * textArenaCapacity)
            textArena = UnsafeMutableRawPointer.allocate(byteCount: textArenaCapacity, alignment: 8)
        }
        textArenaWanted = 0
    }

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
