import Foundation
import Glibc

/// Reads an entry's `ItemStamp` relative to an open folder: one `statx` (for the birth time) or,
/// where `statx` is missing, one `fstatat`. Never follows a final symbolic link. Any thread.
///
/// Swift's Glibc module does not import `statx` (glibc declares it only with `_GNU_SOURCE`), so
/// it is looked up once with `dlsym` and called with the kernel's fixed `struct statx` layout
/// (stable ABI since Linux 4.11): `stx_mode` at byte 28, `stx_ino` at 32, `stx_size` at 40,
/// `stx_btime` at 80, `stx_mtime` at 112, each time a 64-bit second and a 32-bit nanosecond.
enum ItemStatReader {
    private typealias StatxFunction = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer) -> Int32
    private static let statxFunction: StatxFunction? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "statx") else { return nil }
        return unsafeBitCast(symbol, to: StatxFunction.self)
    }()
    private static let statxSize = 256
    private static let typeAndSizeAndTimes: UInt32 = 0x0001 | 0x0100 | 0x0200 | 0x0040 | 0x0800   // TYPE, INO, SIZE, MTIME, BTIME
    private static let birthTimeMask: UInt32 = 0x0800

    /// The stamp of `name` in the folder open as `folder` (`AT_FDCWD` with an absolute path works
    /// too), or nil when it is gone (or cannot be examined).
    static func stamp(in folder: Int32, _ name: UnsafePointer<CChar>) -> ItemStamp? {
        if let statx = statxFunction {
            return withUnsafeTemporaryAllocation(byteCount: statxSize, alignment: 8) { buffer -> ItemStamp? in
                guard let base = buffer.baseAddress else { return nil }
                guard statx(folder, name, AT_SYMLINK_NOFOLLOW, typeAndSizeAndTimes, base) == 0 else { return nil }
                let mask = base.load(fromByteOffset: 0, as: UInt32.self)
                let mode = base.load(fromByteOffset: 28, as: UInt16.self)
                let created = mask & birthTimeMask != 0 ? time(base, 80) : Int64.min
                return ItemStamp(isFolder: UInt32(mode) & S_IFMT == S_IFDIR,
                                 size: base.load(fromByteOffset: 40, as: Int64.self),
                                 modified: time(base, 112), created: created,
                                 inode: base.load(fromByteOffset: 32, as: UInt64.self))
            }
        }
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return ItemStamp(isFolder: info.st_mode & S_IFMT == S_IFDIR, size: Int64(info.st_size),
                         modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                         created: .min, inode: UInt64(info.st_ino))
    }

    private static func time(_ base: UnsafeMutableRawPointer, _ offset: Int) -> Int64 {
        base.load(fromByteOffset: offset, as: Int64.self) * 1_000_000_000
            + Int64(base.load(fromByteOffset: offset + 8, as: UInt32.self))
    }
}
