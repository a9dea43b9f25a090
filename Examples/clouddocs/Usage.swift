/// One command's line in the usage: its synopsis (what follows `clouddocs `) and what it does.
/// The full usage (`clouddocs help`) lists them all; a usage error prints only the one of the
/// command that was got wrong.
struct UsageEntry: Sendable {
    /// The command as typed, e.g. `status` or `kv set`: what a usage error names.
    let command: String
    /// The arguments as shown, e.g. `status <file>`.
    let synopsis: String
    /// What it does, one or more lines.
    let description: [String]

    init(_ command: String, _ synopsis: String, _ description: String...) {
        self.command = command
        self.synopsis = synopsis
        self.description = description
    }

    /// The entry's lines in the full usage: the synopsis, and the description from column 34
    /// (on the synopsis's line when there is room).
    var lines: [String] {
        let column = 32
        let head = "  " + synopsis
        guard let first = description.first else { return [head] }
        let indent = String(repeating: " ", count: column + 2)
        var lines: [String]
        if head.count < column + 1 {
            lines = [head + String(repeating: " ", count: column + 2 - head.count) + first]
        } else {
            lines = [head, indent + first]
        }
        lines += description.dropFirst().map { indent + $0 }
        return lines
    }

    /// The one line a usage error prints.
    var usageLine: String { "usage: clouddocs \(synopsis)" }
}

extension [UsageEntry] {
    /// The entry for `command` (`kv set`, `status`, …), if there is one.
    func entry(for command: String) -> UsageEntry? {
        first { $0.command == command }
    }
}
