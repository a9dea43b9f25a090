import FileCoordination
import Foundation

/// `upload <path>`: one coordinated `.forUploading` read of `path`. Prints
/// "SNAPSHOT <bytes> GROWTH <kB>" — the snapshot's size and how much the peak resident set size
/// (`VmHWM`) grew during the call — or, through main's handler, "ERROR <description>".
/// The snapshot goes under `TMPDIR`, so a parent can point it at a small file system.
func uploadCommand(_ arguments: [String]) throws {
    let url = URL(fileURLWithPath: arguments[1])
    let before = peakResidentKilobytes()
    let size = try Coordinator().coordinate(readingItemAt: url, options: .forUploading) { snapshot in
        var info = stat()
        return lstat(snapshot.path, &info) == 0 ? Int(info.st_size) : -1
    }
    say("SNAPSHOT \(size) GROWTH \(peakResidentKilobytes() - before)")
}

/// `VmHWM` from /proc/self/status, in kB (0 if it cannot be read).
private func peakResidentKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
    return 0
}
