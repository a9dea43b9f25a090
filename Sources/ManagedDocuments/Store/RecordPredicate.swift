/// Which records a fetch returns (Core Data's `NSPredicate`, as a value the compiler checks):
/// comparisons of an attribute with a value, substring tests, and their combinations. Compiled
/// to an SQL `WHERE` clause with bound parameters (never text pasted into SQL).
public indirect enum RecordPredicate: Sendable, Hashable {
    /// How an attribute is compared with a value (the raw values are the SQL operators used).
    public enum Comparison: String, Sendable, Hashable {
        case equal = "IS", notEqual = "IS NOT", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }

    /// `attribute <op> value`; equality with ``AttributeValue/null`` tests for no value.
    case comparison(String, Comparison, AttributeValue)
    /// The string attribute contains `text` (case-insensitive for ASCII letters).
    case contains(String, String)
    /// Every one holds (an empty list holds).
    case and([RecordPredicate])
    /// At least one holds (an empty list never holds).
    case or([RecordPredicate])
    /// The predicate does not hold.
    case not(RecordPredicate)

    /// `attribute == value` (a shorthand for ``comparison(_:_:_:)`` with `.equal`). A fetch with an
    /// attribute the entity lacks fails with a typed error, not here.
    public static func equal(_ attribute: String, _ value: AttributeValue) -> Self { .comparison(attribute, .equal, value) }
    /// `attribute != value` (``comparison(_:_:_:)`` with `.notEqual`).
    public static func notEqual(_ attribute: String, _ value: AttributeValue) -> Self { .comparison(attribute, .notEqual, value) }

    /// The SQL and its parameters, checking every attribute against `entity`.
    func sql(for entity: EntityDescription) throws(ManagedStoreError) -> (String, [SQLiteValue]) {
        switch self {
        case .comparison(let attribute, let comparison, let value):
            try Self.check(attribute, in: entity)
            return ("\(RecordTables.quote(attribute)) \(comparison.rawValue) ?", [value.sqliteValue])
        case .contains(let attribute, let text):
            try Self.check(attribute, in: entity)
            return ("instr(lower(\(RecordTables.quote(attribute))), lower(?)) > 0", [.text(text)])
        case .and(let parts), .or(let parts):
            guard !parts.isEmpty else {
                if case .and = self { return ("1", []) } else { return ("0", []) }
            }
            var clauses: [String] = [], values: [SQLiteValue] = []
            for part in parts {
                let (clause, partValues) = try part.sql(for: entity)
                clauses.append("(\(clause))")
                values += partValues
            }
            if case .and = self { return (clauses.joined(separator: " AND "), values) }
            return (clauses.joined(separator: " OR "), values)
        case .not(let inner):
            let (clause, values) = try inner.sql(for: entity)
            return ("NOT (\(clause))", values)
        }
    }

    private static func check(_ attribute: String, in entity: EntityDescription) throws(ManagedStoreError) {
        guard entity.attribute(named: attribute) != nil else {
            throw .unknownAttribute(entity: entity.name, attribute: attribute)
        }
    }
}
