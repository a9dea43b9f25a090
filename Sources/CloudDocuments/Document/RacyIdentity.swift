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
    /// (always true when nothing was kept): ``look(at:kept:)``'s answer. Any thread.
    static func stillHolds(_ kept: Data?, at url: URL) -> Bool {
        look(at: PathBytes.path(of: url), kept: kept).holds
    }

    /// The identity of the file at `path` (a lossless path string; symbolic links followed; `nil`
    /// when nothing there can be examined) and whether it still holds `kept` (always true when
    /// nothing was kept). A save's check of its file, with as few system calls as it can: without
    /// kept bytes one `stat`; with them `open`, `fstat` of that descriptor (so the identity and the
    /// bytes compared are the same file's) and usually a single `read` of one byte more than
    /// `kept` (a read that returns less than asked, once the file's size is reached, is its end;
    /// a longer file differs). This runs in every save made within ``window`` of the last one,
    /// under the write lock. A file that cannot be opened, examined or read, or that is not a
    /// regular file (a FIFO planted there is opened without blocking, and not read), does not
    /// hold `kept`. Any thread.
    static func look(at path: String, kept: Data?) -> (identity: DiskIdentity?, holds: Bool) {
        guard let kept else { return (DiskIdentity.of(path, followingLinks: true), true) }
        let descriptor = PathBytes.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else { return (DiskIdentity.of(path, followingLinks: true), false) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return (DiskIdentity.of(path, followingLinks: true), false) }
        let identity = DiskIdentity(info)
        guard info.st_mode & S_IFMT == S_IFREG else { return (identity, false) }
        return (identity, holds(kept, descriptor: descriptor, size: Int(info.st_size)))
    }

    /// Whether the regular file open as `descriptor` (at its start), `size` bytes long when
    /// examined, holds exactly `kept`.
    private static func holds(_ kept: Data, descriptor: Int32, size: Int) -> Bool {
        let capacity = kept.count + 1
        return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 16) { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            var total = 0
            while total < capacity {
                let asked = capacity - total
                let count = read(descriptor, base + total, asked)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return false }
                if count == 0 { break }
                total += count
                // Short, and the size is reached: the end (no second read to see it).
                if count < asked && total >= size { break }
            }
            guard total == kept.count else { return false }
            guard total > 0 else { return true }
            return kept.withUnsafeBytes { keptBytes in
                guard let keptBase = keptBytes.baseAddress else { return false }
                return memcmp(keptBase, base, total) == 0
            }
        }
    }
}
