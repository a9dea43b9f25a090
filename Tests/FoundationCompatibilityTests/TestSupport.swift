import Foundation
import Testing

/// A fresh folder for one test, removed at deinit.
final class Scratch: Sendable {
    let url: URL
    init() throws {
        url = URL(fileURLWithPath: "/tmp/cd-compat-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    /// The URL of `name` in the folder, created with `contents` when given.
    func file(_ name: String, contents: String? = nil) throws -> URL {
        let file = url.appendingPathComponent(name)
        if let contents { try Data(contents.utf8).write(to: file) }
        return file
    }
}

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
