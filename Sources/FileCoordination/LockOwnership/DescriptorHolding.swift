/// How one `LockOwner` holds one item in the kernel: a descriptor (an open file description) of
/// the item's lock file, the mode its bytes are used in, and how many of the owner's accesses of
/// each kind are active on it.
///
/// Nested accesses of one owner share the holding, so the kernel sees one holder and only
/// converts its lock; the counts tell `LockOwner` which transition an access needs. Compare
/// `ItemLock`, which says only *what* is locked (a path and an access), not how.
struct DescriptorHolding {
    let file: LockFile
    let fd: Int32
    let mode: LockMode
    private(set) var readers = 0
    private(set) var writers = 0
    private(set) var trees = 0

    /// Whether one more `access` changes what the kernel holds: the first write (an upgrade) or
    /// the first tree lock. A read never does — whatever is held covers it.
    func needsKernel(toAdd access: LockAccess) -> Bool {
        switch access {
        case .read: false
        case .write: writers == 0
        case .tree: trees == 0
        }
    }

    /// Counts one access of kind `access` more (`delta` 1) or less (`delta` -1).
    mutating func count(_ access: LockAccess, by delta: Int) {
        switch access {
        case .read: readers += delta
        case .write: writers += delta
        case .tree: trees += delta
        }
    }

    /// No access is counted any more: everything can be unlocked.
    var hasNoAccess: Bool { readers + writers + trees == 0 }
}

extension DescriptorHolding {
    /// The short way back in for a descriptor an owner kept idle, in plain mode: one attempt that
    /// never waits (`LockProtocol.tryAcquireFreshPlain`), then the check that the lock file is
    /// still linked (`LockFile.confirmLinked`: usually a load, at most an `fstat`). Nil — with
    /// nothing left locked — when the item is held or a writer is queued, or the file was
    /// reclaimed: the caller then goes the long way (`lockFresh`), which waits and relinks.
    /// Makes no call that waits, so `LockOwner` makes it under its state lock.
    static func relockIdle(_ access: LockAccess, file: LockFile, fd: Int32) -> DescriptorHolding? {
        guard LockProtocol.tryAcquireFreshPlain(access, fd: fd, pendingWriters: file.pendingWriters) else { return nil }
        guard file.confirmLinked(fd) else {
            LockProtocol.releaseAll(fd: fd)
            return nil
        }
        var holding = DescriptorHolding(file: file, fd: fd, mode: .plain)
        holding.count(access, by: 1)
        return holding
    }

    /// **The one place a descriptor that holds nothing is first locked**: checks out (or reuses)
    /// a descriptor of the item's lock file, takes `access` on it through
    /// `LockProtocol.acquireFresh` — in group mode under `groupName` — and returns the new
    /// holding with its count set. `locate` finds the item's lock file (and the lock directory,
    /// to create it through `table`); it is not called when `reuse` gives a descriptor. On failure
    /// nothing stays locked and the descriptor is checked in. A check that needs the fresh lock
    /// held (for example that the lock file is still the one at its path) goes right after
    /// `acquireFresh` below.
    static func lockFresh(
        _ access: LockAccess, path: String, group groupName: String?, reuse: (LockFile, Int32)?,
        table: LockTable, stepper: LockStepper,
        locate: () throws(CoordinationError) -> (LockFile, LockDirectory)
    ) throws(CoordinationError) -> DescriptorHolding {
        let file: LockFile
        var fd: Int32
        if let (kept, keptFD) = reuse {
            (file, fd) = (kept, keptFD)
        } else {
            let (located, directory) = try locate()
            file = located
            fd = try located.checkout { (missing) throws(CoordinationError) -> Int32 in
                try table.create(missing, in: directory, step: stepper)
            }
        }
        var mode = LockMode.plain
        if let groupName { mode = .group(GroupCell.allocate(purpose: groupName)) }
        do {
            try LockProtocol.acquireFresh(access, fd: fd, mode: mode, path: path, pendingWriters: file.pendingWriters, stepper: stepper)
            // Lock files are reclaimed: the lock must sit on the item's linked lock file.
            try file.keepLinked(&fd, table: table, stepper: stepper, locate: locate) { (fd) throws(CoordinationError) in
                try LockProtocol.acquireFresh(access, fd: fd, mode: mode, path: path, pendingWriters: file.pendingWriters, stepper: stepper)
            }
        } catch {
            // `keepLinked` leaves -1 when it threw after discarding the descriptor.
            if fd >= 0 {
                LockProtocol.releaseAll(fd: fd)
                file.checkin(fd)
            }
            mode.cell?.free()
            throw error
        }
        var holding = DescriptorHolding(file: file, fd: fd, mode: mode)
        holding.count(access, by: 1)
        return holding
    }
}
