import Foundation
import Glibc
@testable import FileCoordination

/// Looks at an item's lock file from the outside (`F_OFD_GETLK` on a descriptor of its own), so a
/// test can wait until another thread or process has reached a given point of the lock protocol
/// — a writer queued on the pending gate, an upgrader waiting — instead of sleeping and hoping.
enum LockProbe {
    /// True when someone holds the *pending* byte of `url`'s lock file exclusively: a writer (or
    /// an upgrader) is waiting for the item.
    static func writerIsWaiting(_ url: URL) -> Bool {
        isHeldExclusively(url, at: LockFileLayout.pending)
    }

    /// True when someone holds `offset` of `url`'s lock file exclusively.
    static func isHeldExclusively(_ url: URL, at offset: Int) -> Bool {
        guard let directory = try? LockDirectory.current() else { return false }
        let path = LockFileNaming.lockFilePath(for: CanonicalPath.of(url, in: CoordinationRuntime.process.paths), in: directory.path)
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // A shared request conflicts only with an exclusive holder.
        return OFDLock.isContended(.shared, fd: fd, start: offset, length: 1)
    }
}
