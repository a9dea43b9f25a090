internal import CSQLite
import Foundation

/// A failed SQLite call, as a value: the result code SQLite returned (primary and extended), its
/// message, and what was being done. Never a trap: a damaged, locked or full database gives one
/// of these.
public struct SQLiteError: Error, Sendable, Equatable, LocalizedError {
    /// SQLite's extended result code (`sqlite3_extended_errcode`), e.g. `SQLITE_CORRUPT` (11),
    /// `SQLITE_FULL` (13), `SQLITE_BUSY` (5), `SQLITE_NOTADB` (26).
    public let code: Int32
    /// SQLite's message (`sqlite3_errmsg`) at the time of the failure.
    public let message: String
    /// What was being done: "open /path", "prepare SELECT …", "step", "bind", …
    public let operation: String

    /// The primary result code (the low byte of ``code``).
    public var primaryCode: Int32 { code & 0xFF }

    /// Whether the database file is damaged or is not a database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
    public var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public init(code: Int32, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    public var errorDescription: String? {
        "SQLite failed to \(operation): \(message) (result code \(code))"
    }
}
