import Foundation
import Testing
@_exported import TestSupport

extension MessageLog {
    /// Waits until `count` messages have arrived since the last wait (a generous safety timeout
    /// makes a broken test fail instead of hanging; it is never part of the sequencing).
    func waitFor(_ count: Int) -> Bool {
        for _ in 0..<count where arrived.wait(timeout: .now() + 30) != .success { return false }
        return true
    }
}

/// The text of the file at `url`, read directly.
func contents(of url: URL) -> String? {
    try? String(contentsOf: url, encoding: .utf8)
}
