import Glibc
import Synchronization

/// The lock file of one canonical item path.
///
/// Every holder (a coordinator's hold on the item) uses a descriptor of its own — a separate open
/// file description — because OFD locks on one description never conflict with each other. Idle
/// descriptors go to the process-wide `IdleDescriptors` cache (bounded), so the next holder
/// usually skips the `open`.
///
/// Lock files are reclaimed (unlinked) once their item is gone — see `LockFileReclaimer`. So a
/// holder must check, once it holds a lock on a descriptor, that the descriptor's file is still
/// linked (`confirmLinked`, or `keepLinked` which also retries with a fresh descriptor).
final class LockFile: Sendable {
    let itemPath: String
    let filePath: String
    /// The reclaim epoch of the lock directory (nil: unknown, always check with `fstat`).
    let epoch: ReclaimEpoch?
    /// The lock directory's count of writers waiting at pending gates (nil: unknown, fresh
    /// readers always ask the kernel whether the gate is held).
    let pendingWriters: PendingWriters?

    init(itemPath: String, filePath: String, epoch: ReclaimEpoch?, pendingWriters: PendingWriters? = nil) {
        self.itemPath = itemPath
        self.filePath = filePath
        self.epoch = epoch
        self.pendingWriters = pendingWriters
    }

    /// A descriptor with no locks on it: an idle one, else a new `open` (and, when the file does
    /// not exist, `creating`). It may be of an unlinked file: check with `confirmLinked` once locked.
    func checkout(creating: (LockFile) throws(CoordinationError) -> Int32) throws(CoordinationError) -> Int32 {
        if let fd = IdleDescriptors.shared.take(for: self) { return fd }
        let fd = open(filePath, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { return fd }
        let code = errno
        guard code == ENOENT else { throw .lockFailed(path: filePath, errno: Errno(rawValue: code)) }
        return try creating(self)
    }

    /// Returns a descriptor that holds no locks any more (kept idle, or closed).
    func checkin(_ fd: Int32) {
        IdleDescriptors.shared.put(fd, for: self)
    }

    /// Closes a descriptor that must not be used again (its file was unlinked).
    func discard(_ fd: Int32) {
        Self.close(fd)
    }

    /// Every lock-file descriptor is closed here, so its verification record goes with it.
    static func close(_ fd: Int32) {
        VerifiedDescriptors.shared.forget(fd)
        _ = Glibc.close(fd)
    }

    /// True when `fd`'s file is still linked — call it only while `fd` holds a lock.
    ///
    /// A reclaimer unlinks a lock file only while it holds an exclusive lock on the whole file, so
    /// a file seen linked while we hold any lock on it stays linked until we let go. The
    /// reclaimer advances the shared epoch before unlinking: when the epoch is the one recorded
    /// the last time `fd` was seen linked (under a lock), nothing was unlinked since, and the
    /// `fstat` is skipped.
    @inline(__always)
    func confirmLinked(_ fd: Int32) -> Bool {
        let current = epoch?.value
        if let current, VerifiedDescriptors.shared.isVerified(fd, at: current) { return true }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_nlink > 0 else { return false }
        if let current { VerifiedDescriptors.shared.mark(fd, at: current) }
        return true
    }

    /// After `lock(fd)` succeeded: makes sure the locks sit on the item's *linked* lock file.
    /// While `fd`'s file turns out to have been reclaimed, drops its locks, closes it, opens (or
    /// creates, through `table.create` with `stepper`) the file anew and calls `lock` again.
    /// On return `fd` is locked and linked; on a throw `fd` is -1 or still a descriptor the
    /// caller must unlock and check in.
    func keepLinked(
        _ fd: inout Int32, table: LockTable, stepper: LockStepper,
        locate: () throws(CoordinationError) -> (LockFile, LockDirectory),
        lock: (Int32) throws(CoordinationError) -> Void
    ) throws(CoordinationError) {
        var attempts = 0
        while !confirmLinked(fd) {
            attempts += 1
            _ = OFDLock.apply(.unlock, fd: fd, start: 0, length: 0, wait: false)
            discard(fd)
            fd = -1
            // Other idle descriptors of this file are stale too.
            IdleDescriptors.shared.discardAll(filePath: filePath)
            // A reclaimer can win this race again and again only while it loops on this very file
            // (the item is gone and nobody holds it): after a few tries, let it run first. The
            // caller's timeout and cancellation still apply.
            try stepper.context.check()
            if attempts > 4 * Self.relinkAttemptsBeforeYielding {
                usleep(1000)  // back-off, not synchronisation
            } else if attempts > Self.relinkAttemptsBeforeYielding {
                sched_yield()
            }
            let directory = try locate().1
            fd = try checkout { (missing) throws(CoordinationError) -> Int32 in
                try table.create(missing, in: directory, step: stepper)
            }
            try lock(fd)
        }
    }

    /// Each attempt means a reclaimer unlinked the file between our `open` and our lock, which
    /// it does only when nobody holds it: more than a handful in a row happens only against a
    /// reclaimer looping on this file, and then backing off lets it finish (before, 64 straight
    /// losses under a test's tight reclaim loop failed the coordination with `ESTALE`).
    static let relinkAttemptsBeforeYielding = 8
}
