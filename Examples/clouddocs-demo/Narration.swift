import Foundation
import ExampleDocuments

/// Prints the demo's story: numbered steps, and events stamped with the time since the start.
enum Narration {
    private static let start = ContinuousClock.now
    private static let lock = Locked(())

    static func step(_ number: Int, _ title: String) {
        say("\n\(number). \(title)")
    }

    static func event(_ text: String) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        say(String(format: "   %6.3f s  ", Double(milliseconds) / 1000) + text)
    }

    /// Whether standard output is a terminal (the picture is drawn with colour escapes only then).
    static let isTerminal = isatty(STDOUT_FILENO) == 1

    static func say(_ text: String) {
        lock.withLock { _ in
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }

    /// The text on one line, newlines shown as ⏎.
    static func quoted(_ text: String) -> String {
        "“" + text.replacingOccurrences(of: "\r\n", with: "⏎").replacingOccurrences(of: "\n", with: "⏎") + "”"
    }
}
