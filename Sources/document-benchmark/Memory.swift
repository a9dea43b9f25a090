import BenchmarkSupport
import CloudDocuments
import Foundation

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
