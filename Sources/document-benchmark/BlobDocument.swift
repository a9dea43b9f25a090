import CloudDocuments
import Foundation

/// The simplest possible document, written as a user would: its contents are a blob of bytes in a
/// plain stored property (main-actor state, like every `CloudDocument` subclass's).
final class BlobDocument: CloudDocument {
    var blob = Data()

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(blob)
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        blob = contents.data ?? Data()
    }
}

/// Resident-set figures of this process, from /proc/self/status (kB).
enum Memory {
    static func value(_ key: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}
