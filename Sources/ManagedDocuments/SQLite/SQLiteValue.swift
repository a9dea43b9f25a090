import Foundation

/// One value as SQLite stores it (its five storage classes).
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}
