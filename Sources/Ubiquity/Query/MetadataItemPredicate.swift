import Foundation

/// Which items a `MetadataQuery` reports: a Swift closure, a `#Predicate<MetadataItem>`, or a
/// format string in the subset of Apple's predicate language that metadata queries use
/// (`"%K LIKE '*.txt'"`, see `MetadataPredicateParser` and Docs/MetadataQuery.md).
///
/// Evaluated on the query's own thread, once per item seen: a closure must be cheap and must not
/// block; it may run concurrently with your code (it is `@Sendable`).
public struct MetadataItemPredicate: Sendable {
    private enum Storage: Sendable {
        case closure(@Sendable (MetadataItem) -> Bool)
        case expression(MetadataPredicateExpression)
    }
    private let storage: Storage

    /// Every item.
    public static let all = MetadataItemPredicate(expression: .constant(true))

    /// Items for which `test` returns true.
    public init(_ test: @escaping @Sendable (MetadataItem) -> Bool) {
        storage = .closure(test)
    }

    /// Items `predicate` accepts (an evaluation that throws counts as not accepted).
    ///
    ///     MetadataItemPredicate(#Predicate<MetadataItem> { $0.name.hasSuffix(".txt") && $0.size > 0 })
    public init(_ predicate: Predicate<MetadataItem>) {
        storage = .closure { (try? predicate.evaluate($0)) ?? false }
    }

    /// Parses a predicate format string, Apple style: `%K` takes an attribute name (Apple's
    /// `NSMetadataItemFSNameKey` and friends, or a `MetadataItemAttribute`), `%@` a `String`,
    /// number or `Date`.
    ///
    ///     try MetadataItemPredicate(format: "%K LIKE[c] %@", MetadataItemAttribute.fsName.rawValue, "*.txt")
    ///
    /// - Throws: `MetadataPredicateFormatError` saying what is wrong where (Apple's
    ///   `NSPredicate(format:)` raises an exception instead) — also for a format nested more than
    ///   128 levels deep (parentheses and `NOT`/`!`), which could otherwise exhaust the stack.
    ///   Any number of terms joined by `AND`/`OR` is fine.
    public init(format: String, _ arguments: Any...) throws(MetadataPredicateFormatError) {
        try self.init(format: format, argumentArray: arguments)
    }

    /// ``init(format:_:)`` with the arguments in an array.
    public init(format: String, argumentArray arguments: [Any]) throws(MetadataPredicateFormatError) {
        storage = .expression(try MetadataPredicateParser.parse(format, arguments: arguments))
    }

    init(expression: MetadataPredicateExpression) {
        storage = .expression(expression)
    }

    /// Whether `item` is accepted.
    public func evaluate(_ item: MetadataItem) -> Bool {
        switch storage {
        case .closure(let test): test(item)
        case .expression(let expression): expression.evaluate(item)
        }
    }
}
