import Foundation
import Glibc

/// What identifies one version of an item on disk: device, inode, size, and the modification and
/// status-change times to the nanosecond. Two identities differ when the item was replaced (new
/// inode), written (size or modification time) or had its metadata changed (change time).
///
/// Used by documents (to tell someone else's change from the echo of their own save) and by the
/// change monitor (to pass on only the kernel's reports of real changes).
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    /// Modification time, in nanoseconds since 1970.
    package var modified: Int
    /// Status change time, in nanoseconds since 1970.
    package var changed: Int

    /// The identity of nothing: what ``of(_:followingLinks:)`` callers store for a missing item
    /// when they need a value. It equals no existing item's identity (size -1).
    package static let missing = FileIdentity(device: 0, inode: 0, size: -1, modified: 0, changed: 0)

    package init(device: UInt64, inode: UInt64, size: Int64, modified: Int, changed: Int) {
        self.device = device; self.inode = inode; self.size = size
        self.modified = modified; self.changed = changed
    }

    package init(_ info: stat) {
        self.init(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                  modified: info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec,
                  changed: info.st_ctim.tv_sec * 1_000_000_000 + info.st_ctim.tv_nsec)
    }

    /// The identity of the item at `path` (a lossless path string, see ``PathBytes``), or `nil`
    /// if it cannot be examined. `followingLinks: false` examines a symbolic link itself (`lstat`).
    /// Any thread.
    package static func of(_ path: String, followingLinks: Bool) -> FileIdentity? {
        var info = stat()
        let result = PathBytes.withCString(path) { followingLinks ? stat($0, &info) : lstat($0, &info) }
        return result == 0 ? FileIdentity(info) : nil
    }

    /// The identity of the item at a file URL, following symbolic links; `nil` if it cannot be
    /// examined.
    package static func of(_ url: URL) -> FileIdentity? {
        of(PathBytes.path(of: url), followingLinks: true)
    }

    /// The modification time as a `Date`.
    package var modificationDate: Date {
        Date(timeIntervalSince1970: TimeInterval(modified / 1_000_000_000)
             + TimeInterval(modified % 1_000_000_000) / 1e9)
    }
}
