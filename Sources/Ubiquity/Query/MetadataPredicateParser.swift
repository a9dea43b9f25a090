import Foundation

/// Why a predicate format string could not be used: says what was expected where.
public struct MetadataPredicateFormatError: Error, Sendable, Hashable, LocalizedError {
    /// The format string.
    public let format: String
    /// The offset in characters of the token the problem was found at.
    public let offset: Int
    /// What is wrong, for example "expected an operator after kMDItemFSName".
    public let reason: String

    public var errorDescription: String? {
        "Unusable predicate format \"\(format)\" at character \(offset): \(reason)."
    }
}

/// Parses the subset of Apple's predicate format language that metadata queries use:
///
/// ```
/// predicate  := or
/// or         := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := key operator ("[" ("c" | "d" | "cd") "]")? value
/// key        := "%K" | an attribute name (kMDItemFSName, kMDItemDisplayName, kMDItemPath, kMDItemFSSize, …)
/// operator   := "==" | "=" | "!=" | "<>" | "<" | "<=" | ">" | ">=" | "LIKE" | "BEGINSWITH" | "ENDSWITH" | "CONTAINS"
/// value      := "%@" | "%d" | "%i" | "%ld" | "%lld" | "%u" | "%f" | "%lf" | 'text' | "text" | number | TRUE | FALSE | YES | NO
/// ```
///
/// Keywords are case-insensitive. Text attributes (name, display name, path, content type) take
/// every operator; size and dates take the ordering operators; flags (`NSMetadataUbiquitousItem…`
/// booleans) take `==` and `!=`. Anything else is a `MetadataPredicateFormatError`, and so is a
/// format nested more than ``maximumNesting`` levels deep (parentheses and `NOT`/`!` count), so
/// that neither this recursive parser nor the evaluation of what it makes can exhaust a stack.
struct MetadataPredicateParser {
    /// How deeply parentheses and `NOT`/`!` may nest (each `(` and each `NOT` is one level). Far
    /// beyond any real predicate; at this depth parsing and evaluating fit in a 512 KiB stack
    /// (a secondary thread's) even in a debug build under ThreadSanitizer, whose frames are
    /// several times larger — 128 levels did not (tested on a thread with a 512 KiB stack).
    static let maximumNesting = 64

    private enum Token: Equatable {
        case word(String)          // identifiers and keywords
        case text(String)          // quoted strings
        case number(Double)
        case specifier(String)     // %K, %@, %d, …
        case symbol(String)        // ( ) [ ] == != <= >= < > = && || !
        case end
    }

    private let format: String
    private var tokens: [(token: Token, offset: Int)] = []
    private var position = 0
    private var arguments: [Any]
    private var argumentIndex = 0
    /// The parentheses and `NOT`s open at the current token.
    private var nesting = 0

    /// Parses `format` with `arguments` for its `%K`/`%@`/`%d`… specifiers, in order.
    static func parse(_ format: String, arguments: [Any]) throws(MetadataPredicateFormatError) -> MetadataPredicateExpression {
        var parser = MetadataPredicateParser(format: format, arguments: arguments)
        try parser.tokenize()
        let expression = try parser.parseOr()
        guard parser.current == .end else { throw parser.error("unexpected \(parser.describe(parser.current)) after a complete predicate") }
        guard parser.argumentIndex == arguments.count else {
            throw parser.error("\(arguments.count) arguments given, but the format uses \(parser.argumentIndex)")
        }
        return expression
    }

    private init(format: String, arguments: [Any]) {
        self.format = format
        self.arguments = arguments
    }

    private var current: Token { tokens[position].token }
    private func error(_ reason: String) -> MetadataPredicateFormatError {
        MetadataPredicateFormatError(format: format, offset: tokens[min(position, tokens.count - 1)].offset, reason: reason)
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .word(let word): "`\(word)`"
        case .text(let text): "'\(text)'"
        case .number(let number): "\(number)"
        case .specifier(let specifier), .symbol(let specifier): "`\(specifier)`"
        case .end: "the end"
        }
    }

    // MARK: Grammar

    private mutating func parseOr() throws(MetadataPredicateFormatError) -> MetadataPredicateExpression {
        var terms = [try parseAnd()]
        while isKeyword("OR") || current == .symbol("||") {
            position += 1
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(MetadataPredicateFormatError) -> MetadataPredicateExpression {
        var terms = [try parseNot()]
        while isKeyword("AND") || current == .symbol("&&") {
            position += 1
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws(MetadataPredicateFormatError) -> MetadataPredicateExpression {
        if isKeyword("NOT") || current == .symbol("!") {
            try enterNesting()
            defer { nesting -= 1 }
            position += 1
            return .not(try parseNot())
        }
        if current == .symbol("(") {
            try enterNesting()
            defer { nesting -= 1 }
            position += 1
            let inner = try parseOr()
            guard current == .symbol(")") else { throw error("expected `)`, found \(describe(current))") }
            position += 1
            return inner
        }
        if isKeyword("TRUEPREDICATE") { position += 1; return .constant(true) }
        if isKeyword("FALSEPREDICATE") { position += 1; return .constant(false) }
        return try parseComparison()
    }

    /// One more level of parentheses or `NOT` at the current token, or the error that says the
    /// format nests too deeply.
    private mutating func enterNesting() throws(MetadataPredicateFormatError) {
        guard nesting < Self.maximumNesting else {
            throw error("nested too deeply: more than \(Self.maximumNesting) levels of parentheses and NOT")
        }
        nesting += 1
    }

    private mutating func parseComparison() throws(MetadataPredicateFormatError) -> MetadataPredicateExpression {
        let attribute = try parseKey()
        let operation = try parseOperator(after: attribute)
        let options = try parseOptions()
        switch Self.kind(of: attribute) {
        case .text:
            let value: String
            switch current {
            case .text(let text): value = text; position += 1
            case .word(let word) where !Self.isReserved(word): value = word; position += 1
            case .specifier("%@"): value = try textArgument()
            default: throw error("expected a text value for \(attribute.rawValue), found \(describe(current))")
            }
            return .text(attribute, operation, options.fold(value), options)
        case .number:
            guard let order = MetadataPredicateExpression.OrderOperator(rawValue: operation.rawValue), options.isEmpty else {
                throw error("\(attribute.rawValue) is compared with ==, !=, <, <=, > or >=, not \(operation.rawValue)")
            }
            return .number(attribute, order, try numberValue(for: attribute))
        case .flag:
            guard operation == .equal || operation == .notEqual, options.isEmpty else {
                throw error("\(attribute.rawValue) is compared with == or != only")
            }
            let value = try flagValue()
            return .flag(attribute, equals: operation == .equal ? value : !value)
        }
    }

    private mutating func parseKey() throws(MetadataPredicateFormatError) -> MetadataItemAttribute {
        let name: String
        switch current {
        case .specifier("%K"):
            let argument = try nextArgument("%K")
            if let attribute = argument as? MetadataItemAttribute { name = attribute.rawValue }
            else if let text = argument as? String { name = text }
            else if let text = argument as? NSString { name = String(describing: text) }
            else { throw error("%K takes an attribute name (a String), not \(type(of: argument))") }
        case .word(let word) where !Self.isReserved(word):
            name = word
            position += 1
        default:
            throw error("expected an attribute (%K or a name such as kMDItemFSName), found \(describe(current))")
        }
        guard let attribute = MetadataItemAttribute(rawValue: name), attribute != .url else {
            let known = MetadataItemAttribute.allCases.filter { $0 != .url }.map(\.rawValue).joined(separator: ", ")
            throw error("unsupported attribute `\(name)`; the supported ones are \(known)")
        }
        return attribute
    }

    private mutating func parseOperator(after attribute: MetadataItemAttribute) throws(MetadataPredicateFormatError) -> MetadataPredicateExpression.TextOperator {
        let operation: MetadataPredicateExpression.TextOperator?
        switch current {
        case .symbol("=="), .symbol("="): operation = .equal
        case .symbol("!="), .symbol("<>"): operation = .notEqual
        case .symbol("<"): operation = .less
        case .symbol("<="), .symbol("=<"): operation = .lessOrEqual
        case .symbol(">"): operation = .greater
        case .symbol(">="), .symbol("=>"): operation = .greaterOrEqual
        case .word(let word): operation = MetadataPredicateExpression.TextOperator(rawValue: word.uppercased())
        default: operation = nil
        }
        guard let operation else {
            throw error("expected an operator (==, !=, <, >, LIKE, BEGINSWITH, ENDSWITH, CONTAINS) after \(attribute.rawValue), found \(describe(current))")
        }
        position += 1
        return operation
    }

    private mutating func parseOptions() throws(MetadataPredicateFormatError) -> MetadataPredicateExpression.TextOptions {
        guard current == .symbol("[") else { return [] }
        position += 1
        guard case .word(let word) = current else { throw error("expected c, d or cd inside [ ]") }
        var options: MetadataPredicateExpression.TextOptions = []
        for letter in word.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default: throw error("unknown comparison option `\(letter)`; use c, d or cd")
            }
        }
        position += 1
        guard current == .symbol("]") else { throw error("expected `]` after the comparison options") }
        position += 1
        return options
    }

    private mutating func numberValue(for attribute: MetadataItemAttribute) throws(MetadataPredicateFormatError) -> Double {
        switch current {
        case .number(let number):
            position += 1
            return number
        case .specifier(let specifier) where specifier != "%K":
            let argument = try nextArgument(specifier)
            switch argument {
            case let date as Date: return date.timeIntervalSinceReferenceDate
            case let number as any BinaryInteger: return Double(number)
            case let number as Double: return number
            case let number as Float: return Double(number)
            case let number as NSNumber: return number.doubleValue
            default: throw error("\(attribute.rawValue) is compared with a number or a Date, not \(type(of: argument))")
            }
        default:
            throw error("expected a number for \(attribute.rawValue), found \(describe(current))")
        }
    }

    private mutating func flagValue() throws(MetadataPredicateFormatError) -> Bool {
        switch current {
        case .word(let word) where ["TRUE", "YES"].contains(word.uppercased()): position += 1; return true
        case .word(let word) where ["FALSE", "NO"].contains(word.uppercased()): position += 1; return false
        case .number(let number): position += 1; return number != 0
        case .specifier(let specifier) where specifier != "%K":
            let argument = try nextArgument(specifier)
            if let flag = argument as? Bool { return flag }
            // Zero has as many trailing zero bits as it has bits (no conversion: any width, no trap).
            if let number = argument as? any BinaryInteger { return number.trailingZeroBitCount != number.bitWidth }
            if let number = argument as? NSNumber { return number.boolValue }
            throw error("expected a Bool argument, not \(type(of: argument))")
        default:
            throw error("expected TRUE or FALSE, found \(describe(current))")
        }
    }

    private mutating func textArgument() throws(MetadataPredicateFormatError) -> String {
        let argument = try nextArgument("%@")
        if let text = argument as? String { return text }
        if let text = argument as? NSString { return String(describing: text) }
        if let text = argument as? Substring { return String(text) }
        throw error("%@ takes a String here, not \(type(of: argument))")
    }

    private mutating func nextArgument(_ specifier: String) throws(MetadataPredicateFormatError) -> Any {
        guard argumentIndex < arguments.count else {
            throw error("\(specifier) has no argument: only \(arguments.count) given")
        }
        defer { argumentIndex += 1; position += 1 }
        return arguments[argumentIndex]
    }

    private func isKeyword(_ keyword: String) -> Bool {
        if case .word(let word) = current { return word.uppercased() == keyword }
        return false
    }

    private static func isReserved(_ word: String) -> Bool {
        ["AND", "OR", "NOT", "LIKE", "BEGINSWITH", "ENDSWITH", "CONTAINS", "TRUEPREDICATE", "FALSEPREDICATE"]
            .contains(word.uppercased())
    }

    private enum Kind { case text, number, flag }

    private static func kind(of attribute: MetadataItemAttribute) -> Kind {
        switch attribute {
        case .fsName, .displayName, .path, .contentType, .downloadingStatus, .url: .text
        case .fsSize, .fsCreationDate, .fsContentChangeDate, .percentDownloaded, .percentUploaded: .number
        case .isUbiquitous, .hasUnresolvedConflicts, .isDownloading, .isUploaded, .isUploading: .flag
        }
    }

    // MARK: Tokens

    private mutating func tokenize() throws(MetadataPredicateFormatError) {
        let characters = Array(format)
        var index = 0
        func fail(_ reason: String) -> MetadataPredicateFormatError {
            MetadataPredicateFormatError(format: format, offset: index, reason: reason)
        }
        while index < characters.count {
            let character = characters[index]
            let start = index
            if character.isWhitespace { index += 1; continue }
            if character == "'" || character == "\"" {
                var text = ""
                index += 1
                var closed = false
                while index < characters.count {
                    let next = characters[index]
                    if next == "\\", index + 1 < characters.count {
                        text.append(characters[index + 1]); index += 2; continue
                    }
                    if next == character { closed = true; index += 1; break }
                    text.append(next); index += 1
                }
                guard closed else { index = start; throw fail("the text starting here has no closing \(character)") }
                tokens.append((.text(text), start))
            } else if character == "%" {
                var specifier = "%"
                index += 1
                while index < characters.count, characters[index] == "l" { specifier.append("l"); index += 1 }
                guard index < characters.count, "K@diuf".contains(characters[index]) else {
                    index = start
                    throw fail("unknown format specifier; use %K, %@, %d, %i, %ld, %lld, %u or %f")
                }
                specifier.append(characters[index])
                index += 1
                tokens.append((.specifier(specifier.hasPrefix("%l") ? "%" + String(specifier.last!) : specifier), start))
            } else if character.isNumber || (character == "-" && index + 1 < characters.count && characters[index + 1].isNumber) {
                var text = String(character)
                index += 1
                while index < characters.count, characters[index].isNumber || characters[index] == "." { text.append(characters[index]); index += 1 }
                guard let number = Double(text) else { index = start; throw fail("`\(text)` is not a number") }
                tokens.append((.number(number), start))
            } else if character.isLetter || character == "_" || character == "$" {
                var word = ""
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" || characters[index] == "$" {
                    word.append(characters[index]); index += 1
                }
                tokens.append((.word(word), start))
            } else {
                let two = index + 1 < characters.count ? String([character, characters[index + 1]]) : ""
                if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                    tokens.append((.symbol(two), start)); index += 2
                } else if "()[]=<>!".contains(character) {
                    tokens.append((.symbol(String(character)), start)); index += 1
                } else {
                    throw fail("unexpected character `\(character)`")
                }
            }
        }
        tokens.append((.end, characters.count))
    }
}
