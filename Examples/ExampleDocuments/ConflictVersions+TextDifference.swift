import Foundation

extension ConflictVersions {
    /// What tells a text conflict version apart from the current file, for `text-editor
    /// conflicts`: its size, then the first line where it differs from `current` — for example
    /// `18 bytes, line 3: “from the laptop”`. Two versions of one note usually share their first
    /// line, so that line alone would not say which is which.
    ///
    /// - `same text as the current file` when the contents are equal;
    /// - `line N: (ends here)` when the version is the current text cut short;
    /// - `(contents unreadable)` / `(N bytes, not UTF-8 text)` as ``firstLine(of:)`` says.
    ///
    /// Reads both files whole (mapped where safe); never throws.
    public static func textDifference(of version: URL, from current: URL) -> String {
        guard let data = try? Data(contentsOf: version, options: .mappedIfSafe) else { return "(contents unreadable)" }
        let size = "\(data.count) byte\(data.count == 1 ? "" : "s")"
        guard let text = String(validating: data, as: UTF8.self) else { return "(\(size), not UTF-8 text)" }
        let currentText = (try? Data(contentsOf: current, options: .mappedIfSafe)).flatMap { String(validating: $0, as: UTF8.self) }
        guard currentText != text else { return "\(size), same text as the current file" }
        let lines = Self.lines(text)
        let currentLines = currentText.map(Self.lines) ?? []
        let index = zip(lines, currentLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lines.count, currentLines.count)
        guard index < lines.count else { return "\(size), line \(index + 1): (ends here)" }
        var line = lines[index]
        if line.count > 60 { line = String(line.prefix(59)) + "…" }
        return "\(size), line \(index + 1): “\(line)”"
    }

    /// The lines of `text` without their terminators (`\n` or `\r\n`); a final terminator
    /// starts no extra line.
    private static func lines(_ text: String) -> [String] {
        // "\r\n" is one Character in Swift, so both terminators are matched as characters.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }.map(String.init)
        if text.hasSuffix("\n") || text.hasSuffix("\r\n") { lines.removeLast() }
        return lines
    }
}
