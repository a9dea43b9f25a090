import CloudDocuments
import Foundation
import Synchronization

/// The simplest possible document: its contents are a blob of bytes.
final class BlobDocument: CloudDocument, @unchecked Sendable {
    // @unchecked: the only added state is `blob`, a Mutex.
    let blob = Locked(Data())

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(blob.withLock { $0 })
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        blob.withLock { $0 = contents.data ?? Data() }
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
