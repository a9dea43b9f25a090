// Command-line parsing for image-tool: positional arguments, `--name value` / `--name=value`
// options, `--` to end options, and the errors that decide the exit status.

/// A malformed command line (unknown command or option, missing or invalid argument).
/// Reported with the usage text and exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A well-formed command that could not be carried out for a reason the tool itself detected
/// (the document and codec layers report their own errors). Exit status 1.
struct ToolFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A command's arguments (everything after the command name), split into positional arguments
/// and options.
struct Arguments {
    /// The arguments that are not options, in order.
    private(set) var positionals: [String] = []
    /// `true` when `-h` or `--help` appeared before `--`.
    private(set) var wantsHelp = false
    private var options: [String: String] = [:]

    /// Parses `arguments`.
    ///
    /// - An argument starting with `--` is an option: `--name value` or `--name=value`; `name`
    ///   must be in `valueOptions`. A later occurrence replaces an earlier one.
    /// - `aliases` maps short spellings (such as `-o`) to option names.
    /// - A single `-` followed by a number (`-90`) is a positional argument, so negative numbers
    ///   need no quoting; any other unknown `-x` is an error.
    /// - After `--` every argument is positional (for file names starting with `-`).
    ///
    /// - Throws: ``UsageError`` for an unknown option or an option without its value.
    init(_ arguments: some Sequence<String>, valueOptions: Set<String>, aliases: [String: String] = [:]) throws(UsageError) {
        let arguments = Array(arguments)
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                wantsHelp = true
                continue
            }
            let name: String
            var inlineValue: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
            } else if let long = aliases[argument] {
                name = long
            } else if argument.hasPrefix("-"), argument.count > 1, Int(argument) == nil {
                throw UsageError("unknown option “\(argument)” (put “--” before file names that start with “-”)")
            } else {
                positionals.append(argument)
                continue
            }
            guard valueOptions.contains(name) else {
                throw UsageError("unknown option “--\(name)” for this command")
            }
            if let inlineValue {
                options[name] = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError("option “--\(name)” needs a value") }
                options[name] = arguments[index]
                index += 1
            }
        }
    }

    /// The value of option `name`, or `nil` when it was not given.
    func option(_ name: String) -> String? { options[name] }

    /// The value of option `name` as an integer in `range`, or `defaultValue` when not given.
    ///
    /// - Throws: ``UsageError`` when the value is not an integer in `range`.
    func integerOption(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int) throws(UsageError) -> Int {
        guard let text = options[name] else { return defaultValue }
        return try Self.integer(text, named: "--\(name)", in: range)
    }

    /// Checks that exactly `names.count` positional arguments were given and returns them.
    ///
    /// - Throws: ``UsageError`` naming the first missing argument, the first extra one, or the
    ///   first empty one.
    func positionals(_ names: String...) throws(UsageError) -> [String] {
        if positionals.count < names.count {
            throw UsageError("missing argument <\(names[positionals.count])>")
        }
        if positionals.count > names.count {
            throw UsageError("unexpected argument “\(positionals[names.count])”")
        }
        // An empty path would name the working folder.
        if let empty = positionals.firstIndex(of: "") {
            throw UsageError("argument <\(names[empty])> is empty")
        }
        return positionals
    }

    /// `text` as an integer in `range`; `name` is used in the error message.
    ///
    /// - Throws: ``UsageError`` when `text` is not a decimal integer or lies outside `range`.
    static func integer(_ text: String, named name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let value = Int(text) else {
            throw UsageError("\(name) must be a whole number, not “\(text)”")
        }
        guard range.contains(value) else {
            throw UsageError("\(name) must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
        }
        return value
    }
}
