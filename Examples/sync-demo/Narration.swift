import Foundation

/// Prints the demo's story: numbered steps, and events stamped with the time since the start.
enum Narration {
    private static let start = ContinuousClock.now

    /// Starts the clock the events are stamped with.
    static func begin() { _ = start }

    static func step(_ number: Int, _ title: String) {
        say("\n\(number). \(title)")
    }

    static func event(_ text: String) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        say(String(format: "   %6.3f s  ", Double(milliseconds) / 1000) + text)
    }

    /// Lines of another program's output, indented under the current step.
    static func quote(_ output: String) {
        for line in output.split(separator: "\n") { say("      | \(line)") }
    }

    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// The text on one line, newlines shown as ⏎.
    static func quoted(_ text: String) -> String {
        "“" + text.replacingOccurrences(of: "\n", with: "⏎") + "”"
    }
}
