import Foundation
import SystemSupport

/// A parsed predicate of the `NSPredicate` format subset (see `MetadataPredicateParser`), evaluated
/// directly on `MetadataItem` values. Pure values; any thread.
///
/// `AND` and `OR` hold all their terms in one list (`a AND b AND c` is one `and` of three), so
/// the depth of an expression — and of the recursion that evaluates, compares or frees it — is
/// bounded by the parser's nesting limit (``MetadataPredicateParser/maximumNesting``), however
/// many terms a format strings together.
indirect enum MetadataPredicateExpression: Sendable, Hashable {
    case constant(Bool)
    case not(MetadataPredicateExpression)
    /// True when every term is (two or more terms).
    case and([MetadataPredicateExpression])
    /// True when some term is (two or more terms).
    case or([MetadataPredicateExpression])
    case text(MetadataItemAttribute, TextOperator, String, TextOptions)
    case number(MetadataItemAttribute, OrderOperator, Double)
    case flag(MetadataItemAttribute, equals: Bool)

    enum TextOperator: String, Sendable, Hashable {
        case equal = "==", notEqual = "!=", like = "LIKE", beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH", contains = "CONTAINS"
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }

    enum OrderOperator: String, Sendable, Hashable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

        func compare<T: Comparable>(_ left: T, _ right: T) -> Bool {
            switch self {
            case .equal: left == right
            case .notEqual: left != right
            case .less: left < right
            case .lessOrEqual: left <= right
            case .greater: left > right
            case .greaterOrEqual: left >= right
            }
        }
    }

    /// `[c]`, `[d]`, `[cd]`: case- and diacritic-insensitive.
    struct TextOptions: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let caseInsensitive = TextOptions(rawValue: 1)
        static let diacriticInsensitive = TextOptions(rawValue: 2)

        func fold(_ text: String) -> String {
            if isEmpty { return text }
            if self == .caseInsensitive, text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
            var options: String.CompareOptions = []
            if contains(.caseInsensitive) { options.insert(.caseInsensitive) }
            if contains(.diacriticInsensitive) { options.insert(.diacriticInsensitive) }
            return text.folding(options: options, locale: nil)
        }
    }

    func evaluate(_ item: MetadataItem) -> Bool {
        switch self {
        case .constant(let value): return value
        case .not(let inner): return !inner.evaluate(item)
        case .and(let terms): return terms.allSatisfy { $0.evaluate(item) }
        case .or(let terms): return terms.contains { $0.evaluate(item) }
        case let .text(attribute, operation, value, options):
            let subject: String
            switch attribute {
            case .fsName: subject = PathBytes.display(item.name)
            case .displayName: subject = item.displayName
            case .path: subject = PathBytes.display(item.path)
            case .contentType: subject = item.isFolder ? "public.folder" : "public.data"
            default:
                // The downloading status: nil (false) outside a container.
                guard let text = item.value(of: attribute) as? String else { return false }
                subject = text
            }
            return Self.compare(options.fold(subject), operation, value)
        case let .number(attribute, operation, value):
            switch attribute {
            case .fsSize: return !item.isFolder && operation.compare(Double(item.size), value)
            case .fsContentChangeDate: return operation.compare(item.contentChangeDate.timeIntervalSinceReferenceDate, value)
            case .fsCreationDate:
                guard let date = item.creationDate else { return false }
                return operation.compare(date.timeIntervalSinceReferenceDate, value)
            default:
                // The percentages: nil (false) outside a container or when not reported.
                guard let number = item.value(of: attribute) as? Double else { return false }
                return operation.compare(number, value)
            }
        case let .flag(attribute, expected):
            guard let value = item.value(of: attribute) as? Bool else { return false }
            return value == expected
        }
    }

    /// `subject` (already folded) against `value` (folded when parsed).
    private static func compare(_ subject: String, _ operation: TextOperator, _ value: String) -> Bool {
        switch operation {
        case .equal: return subject == value
        case .notEqual: return subject != value
        case .beginsWith: return subject.hasPrefix(value)
        case .endsWith: return subject.hasSuffix(value)
        case .contains: return value.isEmpty || subject.contains(value)
        case .like: return WildcardPattern.matches(Array(subject), Array(value))
        case .less: return subject < value
        case .lessOrEqual: return subject <= value
        case .greater: return subject > value
        case .greaterOrEqual: return subject >= value
        }
    }
}

/// `LIKE`'s patterns: `*` any run of characters (also none), `?` one character, `\` quotes the next.
enum WildcardPattern {
    static func matches(_ text: [Character], _ pattern: [Character]) -> Bool {
        var t = 0, p = 0
        var starPattern = -1, starText = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "\\", p + 1 < pattern.count, pattern[p + 1] == text[t] {
                t += 1; p += 2
            } else if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] != "\\" && pattern[p] == text[t]) {
                t += 1; p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                starPattern = p; starText = t; p += 1
            } else if starPattern >= 0 {
                p = starPattern + 1; starText += 1; t = starText
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
