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
/// slowest step of a small save — about 70–100 µs of a 4 KiB save's 400 µs on the CI machines'
/// ext4, 200–400 µs for 1 MiB — and it ran while the save held the file's write lock. So a save
/// that replaces a file on ext2/3/4 first takes a path-only descriptor of it (`O_PATH`: nothing is
/// opened, no permission or lease is involved, a FIFO or device is not touched), the rename then
/// only removes the name, and the file is freed when that descriptor is closed: after the save
/// (``release(_:on:)``), on a thread nobody waits for.
///
/// The work is moved, not removed: it is done by the release, in the idle time after the save.
/// A save that follows at once (an autosave burst) meets it (below), as it met it in the rename.
///
/// Rules:
/// - **No fuller disk for the next save.** Every save first closes the descriptors still
///   waiting and waits for a release that is closing one right now (``closePending()``: a
///   document's save before it takes the write lock, `SafeSave.write` and `writePackage` as they
///   begin), so a file replaced by a save that has returned is freed before the next save needs
///   the space. Other programs may see the space later than before: until the release has run.
/// - **Bounded waits.** Only a file of at most ``largestHeld`` bytes on the disk is held (16 MiB:
///   freeing one took at most a few milliseconds here); a larger one is freed by its rename, as
///   before. So a save waits for another save's release for at most that long.
/// - **ext2/3/4 only** (`fstatfs` of the folder), where it was measured: on NFS a removed file
///   still in use is renamed to `.nfs…` instead, on tmpfs or FUSE freeing costs the save nothing,
///   and XFS and Btrfs were not measured. A file with other hard links is not freed by the rename
///   either, and is not held.
/// - **Freed after the folder's `fsync`.** On ext4 without a journal (as on the CI machines) the
///   old file's blocks cannot be reused before the rename that replaced it is on the disk; a
///   journal orders that anyway.
///
/// Visible to others: a program watching the *file itself* with inotify (`inotifywait` on the
/// file, an editor's file watcher) gets its `IN_DELETE_SELF` when the release runs, not at the
/// rename (`IN_ATTRIB` still comes at once). Watches of the folder, as every watcher of this
/// package uses, see the rename at once as before.
///
/// Never hang: `pending` is a leaf lock, held only to take or add descriptors; `closing` is held
/// while closing them and takes only `pending` inside; closing an `O_PATH` descriptor calls no
/// file system's `release` and waits for no other process, only for the kernel to free at most
/// ``largestHeld`` bytes. At most one descriptor per save in flight is held, and only until the
/// release runs. Any thread.
enum ReplacedFileRelease {
    /// Descriptors waiting to be closed.
    private static let pending = Locked<[Int32]>([])
    /// Held while descriptors taken from `pending` are closed (taken before `pending`, never the
    /// other way round).
    private static let closing = Locked<Void>(())
    /// Where a release closes when the caller names no queue of its own.
    private static let queue = DispatchQueue(label: "CloudDocuments.ReplacedFileRelease", qos: .utility)

    /// File systems whose freeing of a file is worth deferring (`statfs.f_type`, linux/magic.h):
    /// ext2, ext3 and ext4 share one.
    private static let deferringFileSystems: Set<Int> = [0xEF53]

    /// The largest file held, by the space it takes on the disk (`st_blocks`): 16 MiB.
    static let largestHeld = 16 << 20

    /// A path-only descriptor of the regular file `found` at `target`, about to be replaced by a
    /// rename in the folder open as `folder`; -1 (nothing held) when the file has other links or
    /// takes more than ``largestHeld`` bytes, the folder is not on ext2/3/4 (or could not be
    /// opened: -1), or the open fails.
    static func hold(_ target: SystemPath, found: stat, folder: Int32) -> Int32 {
        guard found.st_mode & S_IFMT == S_IFREG, found.st_nlink == 1, Int(found.st_blocks) * 512 <= largestHeld,
              defersFreeing(inFolder: folder) else { return -1 }
        return target.withCString { Glibc.open($0, CSHIM_O_PATH | O_NOFOLLOW | O_CLOEXEC) }
    }

    /// Whether the folder open as `folder` is on a file system whose freeing of a file is worth
    /// deferring (false for -1).
    static func defersFreeing(inFolder folder: Int32) -> Bool {
        folder >= 0 && deferringFileSystems.contains(cshim_file_system_type(folder))
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
