import CSystemShim
import Foundation
import Glibc

/// Reads an entry's `ItemStamp` relative to an open folder: one `statx` (for the birth time) or,
/// where the kernel lacks `statx` (ENOSYS, before Linux 4.11), one `fstatat`. Never follows a
/// final symbolic link. Any thread.
///
/// `statx` and `struct statx` come from CSystemShim (the Glibc module declares them only with
/// `_GNU_SOURCE`).
enum ItemStatReader {
    /// What a stamp needs: the type (in the mode), inode, size, modification and birth times.
    private static let typeAndSizeAndTimes = UInt32(STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MTIME | STATX_BTIME)

    /// The stamp of `name` in the folder open as `folder` (`AT_FDCWD` with an absolute path works
    /// too), or nil when it is gone (or cannot be examined).
    static func stamp(in folder: Int32, _ name: UnsafePointer<CChar>) -> ItemStamp? {
        var info = statx()
        if cshim_statx(folder, name, AT_SYMLINK_NOFOLLOW, typeAndSizeAndTimes, &info) == 0 {
            let created = info.stx_mask & UInt32(STATX_BTIME) != 0 ? nanoseconds(info.stx_btime) : Int64.min
            return ItemStamp(isFolder: UInt32(info.stx_mode) & S_IFMT == S_IFDIR, size: Int64(info.stx_size),
                             modified: nanoseconds(info.stx_mtime), created: created, inode: info.stx_ino)
        }
        guard errno == ENOSYS else { return nil }
        var status = stat()
        guard fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return ItemStamp(isFolder: status.st_mode & S_IFMT == S_IFDIR, size: Int64(status.st_size),
                         modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec),
                         created: .min, inode: UInt64(status.st_ino))
    }

    /// A `statx` time in nanoseconds since 1970.
    private static func nanoseconds(_ time: statx_timestamp) -> Int64 {
        time.tv_sec * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
