import Foundation

/// Every transition a holder makes on one lock file's bytes, in plain and group mode — the whole
/// lock protocol in one place (Docs/Coordination.md has the same list as a table).
///
/// A holder is one open file description (`fd`) of the item's lock file. `LockOwner` decides
/// *which* transition a coordinator needs (from its counts of nested reads and writes) and calls
/// exactly one of these; nothing else in the package takes or drops locks on item bytes, except
/// `LockTable.create`, which holds the tree byte of the directories above shared while it
/// creates a lock file.
///
/// | transition | plain | group |
/// | --- | --- | --- |
/// | fresh read | pending free? then R0+columns shared | pending shared (a moment), R0 + other rows shared |
/// | fresh write | R0+columns exclusive; if busy: pending exclusive, then wait | pending exclusive, column + cell exclusive, then other rows shared |
/// | upgrade read → write | upgrade marker (no wait, else `.wouldDeadlock`); pending only if free; R0+columns exclusive | upgrade marker; pending only if free; column + cell exclusive |
/// | downgrade write → read | R0+columns shared | R0 shared, then column + cell unlocked |
/// | write ends, no read left | everything but the tree byte unlocked | the same |
/// | tree lock / tree ends | tree exclusive / tree unlocked | the same |
/// | release | one unlock of the whole file | the same |
enum LockProtocol {
    // MARK: Fresh acquire (the holder has no lock on this descriptor yet)

    /// Takes `access` on a descriptor that holds nothing yet. `pendingWriters` is the lock
    /// directory's count of writers waiting at pending gates (a hint: see ``PendingWriters``).
    static func acquireFresh(_ access: LockAccess, fd: Int32, mode: LockMode, path: String,
                             pendingWriters: PendingWriters? = nil, stepper: LockStepper) throws(CoordinationError) {
        switch access {
        case .tree:
            try takeTree(fd: fd, path: path, stepper: stepper)
        case .read:
            if case .plain = mode, tryAcquireFreshPlain(.read, fd: fd, pendingWriters: pendingWriters) { return }
            try withPendingGate(.shared, fd: fd, path: path, stepper: stepper) { () throws(CoordinationError) in
                switch mode {
                case .plain:
                    try stepper.take(.shared, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, itemPath: path, subtree: false)
                case .group(let cell):
                    try stepper.take(.shared, fd: fd, start: LockFileLayout.groupReader, length: 1, itemPath: path, subtree: false)
                    try takeOtherRows(of: cell, fd: fd, path: path, stepper: stepper)
                }
            }
        case .write:
            if case .plain = mode, tryAcquireFreshPlain(.write, fd: fd, pendingWriters: pendingWriters) { return }
            try withPendingGate(.exclusive, fd: fd, path: path, counted: pendingWriters, stepper: stepper) { () throws(CoordinationError) in
                switch mode {
                case .plain:
                    try stepper.take(.exclusive, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, itemPath: path, subtree: false)
                case .group(let cell):
                    // Own column and cell first, the other rows last: while it waits for its
                    // cell, a group writer must hold no other group's row, or a reader of that
                    // group upgrading to a write (which skips the gate) would wait for it while it
                    // waits for that reader. Fresh writers wait one at a time (the gate), so
                    // holding the cells while waiting for the rows blocks no other fresh writer.
                    try takeWriterCells(cell, fd: fd, path: path, stepper: stepper)
                    try takeOtherRows(of: cell, fd: fd, path: path, stepper: stepper)
                }
            }
        }
    }

    /// The fast path of a fresh plain read or write, which never waits: true when `access` was
    /// taken at once. A read goes in only when no writer is queued on the pending gate (none
    /// anywhere, by the shared count; else as the kernel says) and nobody writes; a write when
    /// nobody holds the item. False: nothing was taken (the caller goes on to the gate).
    /// `.tree` is never taken here.
    @inline(__always)
    static func tryAcquireFreshPlain(_ access: LockAccess, fd: Int32, pendingWriters: PendingWriters?) -> Bool {
        switch access {
        case .read:
            return (pendingWriters?.noneWaiting == true
                    || !OFDLock.isContended(.exclusive, fd: fd, start: LockFileLayout.pending, length: 1))
                && OFDLock.apply(.shared, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, wait: false) == .done
        case .write:
            return OFDLock.apply(.exclusive, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, wait: false) == .done
        case .tree:
            return false
        }
    }

    // MARK: Upgrade (the holder already holds the item)

    /// Adds `access` to a descriptor that already holds a read (or a write, for `.tree`).
    ///
    /// A read becoming a write does **not** queue on the pending gate: a writer waiting there
    /// waits for this holder's read, so queueing behind it would deadlock. The holder is already
    /// inside; it waits only for the other readers (the kernel keeps its shared lock meanwhile,
    /// so no writer slips in). Two readers that both become writers would wait for each other:
    /// the upgrade marker, taken without waiting first, makes the second fail with `.wouldDeadlock`.
    static func upgrade(to access: LockAccess, fd: Int32, mode: LockMode, path: String,
                        pendingWriters: PendingWriters? = nil, stepper: LockStepper) throws(CoordinationError) {
        switch access {
        case .read:
            return
        case .tree:
            try takeTree(fd: fd, path: path, stepper: stepper)
        case .write:
            try takeUpgradeMarker(fd: fd, mode: mode, path: path)
            defer { dropUpgradeMarker(fd: fd) }
            // Still keep new readers from starving the upgrade: hold the gate while waiting when
            // it is free. When a queued writer holds it, new readers already queue behind that one.
            let holdsGate = OFDLock.apply(.exclusive, fd: fd, start: LockFileLayout.pending, length: 1, wait: false) == .done
            defer { if holdsGate { _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.pending, length: 1, wait: false) } }
            try (holdsGate ? pendingWriters : nil).counting { () throws(CoordinationError) in
                switch mode {
                case .plain:
                    try stepper.take(.exclusive, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, itemPath: path, subtree: false)
                case .group(let cell):
                    try takeWriterCells(cell, fd: fd, path: path, stepper: stepper)
                }
            }
        }
    }

    // MARK: Downgrade and release (never wait)

    /// The last write of a holding ended. With reads left (`keepingRead`), the holding becomes a
    /// plain read of its mode; otherwise only the tree byte (if held) stays locked.
    static func dropWrite(fd: Int32, mode: LockMode, keepingRead: Bool) {
        guard keepingRead else {
            _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.pending, length: 0, wait: false)
            return
        }
        switch mode {
        case .plain:
            // Converting exclusive → shared never waits.
            _ = OFDLock.apply(.shared, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, wait: false)
        case .group(let cell):
            // A group reader holds R0 shared: take it *before* giving the column back, so no plain
            // writer gets in between. It cannot be refused: only plain writers hold R0 exclusive,
            // and none can while this holder's column is exclusive. Should it fail all the same,
            // the holding stays exclusive (safe) until released.
            guard OFDLock.apply(.shared, fd: fd, start: LockFileLayout.groupReader, length: 1, wait: false) == .done else { return }
            _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.column(cell.column), length: 1, wait: false)
            _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.cell(row: cell.row, column: cell.column), length: 1, wait: false)
        }
    }

    /// The last tree access of a holding ended.
    static func dropTree(fd: Int32) {
        _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.tree, length: 1, wait: false)
    }

    /// The holding ended: one unlock of every byte.
    static func releaseAll(fd: Int32) {
        _ = OFDLock.apply(.unlock, fd: fd, start: 0, length: 0, wait: false)
    }

    // MARK: Pieces

    private static func takeTree(fd: Int32, path: String, stepper: LockStepper) throws(CoordinationError) {
        try stepper.take(.exclusive, fd: fd, start: LockFileLayout.tree, length: 1, itemPath: path, subtree: true)
    }

    /// Holds the pending gate around `body`: writers take it exclusively (so new readers queue
    /// behind them), counted in `counted` from before they queue until they are through;
    /// readers take it shared for a moment (so they wait for a queued writer).
    private static func withPendingGate(_ kind: OFDLock.Kind, fd: Int32, path: String, counted: PendingWriters? = nil,
                                        stepper: LockStepper,
                                        _ body: () throws(CoordinationError) -> Void) throws(CoordinationError) {
        try (kind == .exclusive ? counted : nil).counting { () throws(CoordinationError) in
            try stepper.take(kind, fd: fd, start: LockFileLayout.pending, length: 1, itemPath: path, subtree: false)
            defer { _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.pending, length: 1, wait: false) }
            try body()
        }
    }

    private static func takeOtherRows(of cell: GroupCell, fd: Int32, path: String, stepper: LockStepper) throws(CoordinationError) {
        for (start, length) in otherRows(of: cell.row, from: LockFileLayout.rowsStart, end: LockFileLayout.rowsEnd) {
            try stepper.take(.shared, fd: fd, start: start, length: length, itemPath: path, subtree: false)
        }
    }

    private static func takeWriterCells(_ cell: GroupCell, fd: Int32, path: String, stepper: LockStepper) throws(CoordinationError) {
        try stepper.take(.exclusive, fd: fd, start: LockFileLayout.column(cell.column), length: 1, itemPath: path, subtree: false)
        try stepper.take(.exclusive, fd: fd, start: LockFileLayout.cell(row: cell.row, column: cell.column), length: 1, itemPath: path, subtree: false)
    }

    /// The byte ranges of every row but `row`, in a band of rows starting at `start`.
    private static func otherRows(of row: Int, from start: Int, end: Int) -> [(start: Int, length: Int)] {
        var ranges: [(start: Int, length: Int)] = []
        let own = start + row * LockFileLayout.rowLength
        if own > start { ranges.append((start, own - start)) }
        let above = own + LockFileLayout.rowLength
        if above < end { ranges.append((above, end - above)) }
        return ranges
    }

    /// Marks this holder as a reader waiting to become a writer, without waiting. Two upgraders
    /// whose writes conflict (plain and anyone, or two different groups) conflict here too; two
    /// members of one group do not. A conflict means the other upgrader waits for this holder's
    /// read while this one would wait for its read: `.wouldDeadlock`.
    private static func takeUpgradeMarker(fd: Int32, mode: LockMode, path: String) throws(CoordinationError) {
        var pieces: [(kind: OFDLock.Kind, start: Int, length: Int)]
        switch mode {
        case .plain:
            pieces = [(.exclusive, LockFileLayout.upgradeGate, 1)]
        case .group(let cell):
            pieces = [(.shared, LockFileLayout.upgradeGate, 1)]
            for range in otherRows(of: cell.row, from: LockFileLayout.upgradeRowsStart, end: LockFileLayout.upgradeRowsEnd) {
                pieces.append((.shared, range.start, range.length))
            }
            pieces.append((.exclusive, LockFileLayout.upgradeCell(row: cell.row, column: cell.column), 1))
        }
        for piece in pieces {
            switch OFDLock.apply(piece.kind, fd: fd, start: piece.start, length: piece.length, wait: false) {
            case .done:
                continue
            case .failed(let code):
                dropUpgradeMarker(fd: fd)
                throw .lockFailed(path: path, errno: Errno(rawValue: code))
            case .wouldBlock, .interrupted:
                dropUpgradeMarker(fd: fd)
                throw .wouldDeadlock(URL(fileURLWithPath: path))
            }
        }
    }

    private static func dropUpgradeMarker(fd: Int32) {
        _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.upgradeGate, length: 0, wait: false)
    }
}
