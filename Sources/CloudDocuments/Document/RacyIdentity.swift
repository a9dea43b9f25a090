import Foundation
import Glibc
import SystemSupport

/// Defends the "file changed since we read or wrote it?" check against what `stat` cannot see.
///
/// A document compares the file's identity (device, inode, size, modification and change times)
/// with the one it recorded. The kernel stamps times from a coarse clock (one tick, up to 10 ms),
/// and a file system reuses a freed inode number at once: two saves by two processes within one
/// tick can leave a file with a new content and exactly the old identity — same inode (reused),
/// same size, same times. Trusting it would let the next save overwrite that content unseen.
///
/// As git does for its index ("racy git"): an identity recorded within `window` of its own change
/// time is *racy*; the document then also keeps the bytes it read or wrote (up to `byteLimit`),
/// and its next save compares them with the file's when the identity looks unchanged. After the
/// window, any later change gets a later time stamp, so the identity alone decides.
enum RacyIdentity {
    /// Longer than any kernel clock tick (1–10 ms) with room for a busy machine.
    static let window = 100_000_000  // ns
    /// Larger contents are not kept (the check then trusts the identity, as before).
    static let byteLimit = 1 << 20

    /// The bytes to keep with `identity` (recorded now), or nil when the identity can be trusted.
    static func bytesToKeep(for identity: DiskIdentity?, contents: Data?) -> Data? {
        guard let identity, let contents, contents.count <= byteLimit else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanoseconds = now.tv_sec * 1_000_000_000 + now.tv_nsec
        return nanoseconds - identity.changed < window ? contents : nil
    }

    /// Whether the file at `url`, whose identity equals the recorded one, still holds `kept`
    /// (always true when nothing was kept). Reads at most one byte more than `kept` with plain
    /// system calls (this runs in every save made within `window` of the last one, under the
    /// write lock); a file that cannot be opened or read (or a FIFO planted there, which is
    /// opened without blocking) counts as changed. Any thread.
    static func stillHolds(_ kept: Data?, at url: URL) -> Bool {
        guard let kept else { return true }
        let descriptor = PathBytes.withCString(PathBytes.path(of: url)) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        // One byte more than kept: a longer file differs.
        var buffer = [UInt8](repeating: 0, count: kept.count + 1)
        var total = 0
        while total < buffer.count {
            let count = buffer.withUnsafeMutableBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return -1 }
                return read(descriptor, base + total, bytes.count - total)
            }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return false }
            if count == 0 { break }
            total += count
        }
        guard total == kept.count else { return false }
        guard total > 0 else { return true }
        return kept.withUnsafeBytes { keptBytes in
            buffer.withUnsafeBytes { readBytes in
                guard let keptBase = keptBytes.baseAddress, let readBase = readBytes.baseAddress else { return false }
                return memcmp(keptBase, readBase, total) == 0
            }
        }
    }
}
