import Foundation
import Glibc
@testable import FileCoordination

/// Tells a test when some thread or process sleeps in the kernel waiting for the lock of an item:
/// `/proc/locks` lists every blocked lock request as a line with `->`, naming the lock file's
/// inode. Waiting for that line (with `Polling`) is waiting for a state, not for time.
enum KernelLockProbe {
    /// True when a blocked lock request on `url`'s lock file is listed now (wait for it with
    /// `Polling`).
    static func someoneWaits(for url: URL) -> Bool {
        guard let directory = try? LockDirectory.current() else { return false }
        let lockFile = LockFileNaming.lockFilePath(for: CanonicalPath.of(url, in: CoordinationRuntime.process.paths), in: directory.path)
        var info = stat()
        return stat(lockFile, &info) == 0 && isBlocked(inode: UInt64(info.st_ino))
    }

    private static func isBlocked(inode: UInt64) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return false }
        for line in text.split(separator: "\n") where line.contains("->") {
            // "12: -> OFDLCK ADVISORY READ -1 00:2e:4711 3 EOF": the third field of major:minor:inode.
            for field in line.split(separator: " ") {
                let parts = field.split(separator: ":")
                if parts.count == 3, UInt64(parts[2]) == inode { return true }
            }
        }
        return false
    }
}
