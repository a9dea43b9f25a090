import CSystemShim
import Dispatch
import FileCoordination
import Glibc
import SystemSupport

/// Frees the file a save replaced after the save, instead of inside its rename.
///
/// Renaming the new file over the old one unlinks the old one, and when nothing holds it the
/// kernel frees it there and then, inside `rename`: its blocks go back to the file system and, on
/// a disk mounted with `discard`, a TRIM is waited for. After the two `fsync`s that was the
/// slowest step of a small save — about 70 µs of a 4 KiB save's 400 µs on the CI machines' ext4,
/// 200 µs for 1 MiB — and it ran while the save held the file's write lock. So a save that
/// replaces a file on a local disk first takes a path-only descriptor of it (`O_PATH`: nothing is
/// opened, no permission or lease is involved, a FIFO or device is not touched), the rename then
/// only removes the name, and the file is freed when that descriptor is closed: after the save
/// (``release(_:on:)``), on a thread nobody waits for.
///
/// Guarantees:
/// - **Later, never earlier.** The descriptor is released only after the folder is flushed, so
///   the old file's blocks are given back once the rename that replaced it is on the disk: a power
///   cut before that finds the old file whole (the plain `rename` frees them before the folder's
///   `fsync`).
/// - **No fuller disk for the next save.** Every ``SafeSave`` write first closes what is still
///   waiting and waits for a release that is closing right now (``closePending()``): a file
///   replaced by a save that has returned is freed before the next save writes. Other writers of
///   the disk may see the space some microseconds later than before.
/// - **Local disks only** (ext2/3/4, XFS, Btrfs, F2FS, bcachefs; `fstatfs` of the folder): on NFS
///   an unlinked file still in use is renamed to `.nfs…` instead, and elsewhere (tmpfs, FUSE)
///   freeing costs the save nothing worth a descriptor. A file with other hard links is not
///   freed by the rename either, and is not held.
///
/// Never hang: `pending` is a leaf lock, held only to take or add descriptors; `closing` is held
/// while closing them and takes only `pending` inside; closing an `O_PATH` descriptor calls no
/// file system's `release` and waits for no other process. A save waits for `closing` only while a
/// release is freeing a file (microseconds for a small one, milliseconds for a large one: the time
/// the previous save's rename used to spend on it). At most one descriptor per save in flight is
/// held, and only until the release runs. Any thread.
enum ReplacedFileRelease {
    /// Descriptors waiting to be closed.
    private static let pending = Locked<[Int32]>([])
    /// Held while descriptors taken from `pending` are closed (taken before `pending`, never the
    /// other way round).
    private static let closing = Locked<Void>(())
    /// Where a release closes when the caller names no queue of its own.
    private static let queue = DispatchQueue(label: "CloudDocuments.ReplacedFileRelease", qos: .utility)

    /// File systems whose freeing of a file is worth deferring (`statfs.f_type`, linux/magic.h).
    private static let localDiskFileSystems: Set<Int> = [
        0xEF53,  // ext2, ext3, ext4
        0x5846_5342,  // XFS
        0x9123_683E,  // Btrfs
        0xF2F5_2010,  // F2FS
        0xCA45_1A4E,  // bcachefs
    ]

    /// A path-only descriptor of the regular file `found` at `target`, about to be replaced by a
    /// rename in the folder open as `folder`; -1 (nothing held) when the file has other links,
    /// the folder is not on a local disk (or could not be opened: -1), or the open fails.
    static func hold(_ target: SystemPath, found: stat, folder: Int32) -> Int32 {
        guard found.st_mode & S_IFMT == S_IFREG, found.st_nlink == 1, isOnLocalDisk(folder: folder) else { return -1 }
        return target.withCString { Glibc.open($0, CSHIM_O_PATH | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// Whether the folder open as `folder` is on a file system whose freeing of a file is worth
    /// deferring (false for -1).
    static func isOnLocalDisk(folder: Int32) -> Bool {
        folder >= 0 && localDiskFileSystems.contains(cshim_file_system_type(folder))
    }

    /// Closes `descriptor` (from ``hold(_:found:folder:)``; -1 does nothing) after the caller
    /// goes on: in a block queued on `queue` — the caller's own serial queue, so the block runs
    /// right after the caller's current work with no thread to wake — or, without one, on a
    /// utility queue of its own.
    static func release(_ descriptor: Int32, on queue: DispatchQueue?) {
        guard descriptor >= 0 else { return }
        pending.withLock { $0.append(descriptor) }
        (queue ?? Self.queue).async { closePending() }
    }

    /// Closes at once (a save that failed before its rename: nothing was replaced).
    static func closeNow(_ descriptor: Int32) {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    /// Closes every descriptor still waiting, and waits for a release closing some right now (see
    /// "No fuller disk" above): once it returns, every file replaced by a save that had returned is
    /// freed. Cheap when nothing is waiting: two uncontended locks.
    static func closePending() {
        closeAllWaiting()
    }

    /// Takes the waiting descriptors and closes them, holding `closing` throughout: whoever gets
    /// `closing` next finds them closed.
    private static func closeAllWaiting() {
        closing.withLock { _ in
            let descriptors = pending.withLock { descriptors -> [Int32] in
                defer { descriptors.removeAll() }
                return descriptors
            }
            for descriptor in descriptors { _ = Glibc.close(descriptor) }
        }
    }
}
