import Foundation
import Glibc
import Synchronization

/// The locks one coordinator (or one purpose) holds, with nesting.
///
/// A coordinator never blocks itself: a nested read inside its own write, or a write inside its own
/// read, reuses the same open file description, so the kernel sees one owner and only converts
/// the lock (shared → exclusive and back). Counts say how many accesses of each kind are active.
///
/// Two lock *modes* exist (see `LockFileLayout` and Docs/Coordination.md):
/// - **plain** — the coordinator's purpose identifier has never been read or set, so nobody else
///   can share it: readers hold R0 + columns shared, writers hold them exclusively (1 syscall);
/// - **group** — the purpose identifier may be shared with other coordinators, here or in other
///   processes, which must not block each other: members hold the other groups' rows shared, and
///   a writer also holds one column and its own cell exclusively.
final class LockOwner: @unchecked Sendable {
    // @unchecked: `holdings`, `groupName` and `busy` are only touched with `condition` locked.
    private struct Holding {
        let file: LockFile
        let fd: Int32
        let group: GroupCell?
        var readers = 0
        var writers = 0
        var trees = 0
    }

    struct GroupCell {
        let row: Int
        let column: Int
        let columnSlot: Int
    }

    private let condition = NSCondition()
    private var holdings: [String: Holding] = [:]
    private var busy: Set<String> = []
    private var groupName: String?
    private static let nextID = Atomic<Int>(0)
    private let uniqueKey: String

    init() {
        uniqueKey = "#owner-\(getpid())-\(LockOwner.nextID.add(1, ordering: .relaxed).newValue)"
    }

    /// The key that decides which claims never block each other: the purpose when shared,
    /// otherwise a key unique to this owner.
    var groupKey: String {
        condition.lock()
        defer { condition.unlock() }
        return groupName ?? uniqueKey
    }

    /// Switches to group mode under `name`. Holdings taken before keep their mode until released.
    func setGroup(_ name: String) {
        condition.lock()
        groupName = name
        condition.unlock()
    }

    func holdsTree(_ path: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return (holdings[path]?.trees ?? 0) > 0
    }

    // MARK: Acquire and release

    enum Access { case read, write, tree }

    /// Takes `access` on `file` for this owner, waiting as `stepper` allows.
    func acquire(_ access: Access, on file: LockFile, directory: LockDirectory, stepper: LockStepper) throws(CoordinationError) {
        let path = file.itemPath
        // Fast bookkeeping for nested holds; otherwise reserve the holding while the kernel works.
        condition.lock()
        while busy.contains(path) {
            // Another thread of this same owner is changing this holding; it never waits long
            // without a deadline of its own, so wait for it (bounded by our own deadline).
            if let deadline = stepper.context.deadline {
                let left = deadline - ContinuousClock.now
                if left <= .zero { condition.unlock(); throw .timedOut }
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18))
            } else {
                condition.wait()
            }
            if stepper.context.tokens.contains(where: { $0.isCancelled }) { condition.unlock(); throw .cancelled }
        }
        if var holding = holdings[path] {
            let needsKernel: Bool
            switch access {
            case .read: needsKernel = false
            case .write: needsKernel = holding.writers == 0
            case .tree: needsKernel = holding.trees == 0
            }
            if !needsKernel {
                bump(&holding, access, by: 1)
                holdings[path] = holding
                condition.unlock()
                return
            }
            busy.insert(path)
            condition.unlock()
            do {
                try upgrade(holding, to: access, stepper: stepper)
            } catch {
                finish(path) { _ in }
                throw error
            }
            finish(path) { holdings in
                if var current = holdings[path] { bump(&current, access, by: 1); holdings[path] = current }
            }
            return
        }
        busy.insert(path)
        let group = groupName.map { name in
            GroupCell(row: Self.row(for: name), column: 0, columnSlot: -1)
        }
        condition.unlock()

        var fd: Int32 = -1
        var cell: GroupCell?
        do {
            fd = try file.checkout { (missing) throws(CoordinationError) -> Int32 in
                try LockTable.shared.create(missing, in: directory, step: stepper)
            }
            if let group {
                let slot = ColumnAllocator.shared.allocate()
                cell = GroupCell(row: group.row, column: ColumnAllocator.column(for: slot), columnSlot: slot)
            }
            try acquireFresh(access, fd: fd, group: cell, path: path, stepper: stepper)
        } catch {
            if fd >= 0 {
                _ = OFDLock.apply(.unlock, fd: fd, start: 0, length: 0, wait: false)
                file.checkin(fd)
            }
            if let cell { ColumnAllocator.shared.release(cell.columnSlot) }
            finish(path) { _ in }
            throw error
        }
        finish(path) { holdings in
            var holding = Holding(file: file, fd: fd, group: cell)
            bump(&holding, access, by: 1)
            holdings[path] = holding
        }
    }

    /// Gives back one access of kind `access` on `path`.
    func release(_ access: Access, on path: String) {
        condition.lock()
        guard var holding = holdings[path] else { condition.unlock(); return }
        bump(&holding, access, by: -1)
        if holding.readers + holding.writers + holding.trees == 0 {
            holdings.removeValue(forKey: path)
            condition.unlock()
            _ = OFDLock.apply(.unlock, fd: holding.fd, start: 0, length: 0, wait: false)
            holding.file.checkin(holding.fd)
            if let group = holding.group { ColumnAllocator.shared.release(group.columnSlot) }
            return
        }
        holdings[path] = holding
        let downgrade = access == .write && holding.writers == 0
        let dropTree = access == .tree && holding.trees == 0
        condition.unlock()
        if dropTree {
            _ = OFDLock.apply(.unlock, fd: holding.fd, start: LockFileLayout.tree, length: 1, wait: false)
        }
        if downgrade {
            if let group = holding.group {
                _ = OFDLock.apply(.unlock, fd: holding.fd, start: LockFileLayout.column(group.column), length: 1, wait: false)
                _ = OFDLock.apply(.unlock, fd: holding.fd, start: LockFileLayout.cell(row: group.row, column: group.column), length: 1, wait: false)
            } else if holding.readers > 0 {
                _ = OFDLock.apply(.shared, fd: holding.fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, wait: false)
            } else {
                _ = OFDLock.apply(.unlock, fd: holding.fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, wait: false)
            }
        }
    }

    private func finish(_ path: String, _ update: (inout [String: Holding]) -> Void) {
        condition.lock()
        update(&holdings)
        busy.remove(path)
        condition.broadcast()
        condition.unlock()
    }

    private func bump(_ holding: inout Holding, _ access: Access, by delta: Int) {
        switch access {
        case .read: holding.readers += delta
        case .write: holding.writers += delta
        case .tree: holding.trees += delta
        }
    }

    // MARK: Kernel plans

    private func acquireFresh(_ access: Access, fd: Int32, group: GroupCell?, path: String, stepper: LockStepper) throws(CoordinationError) {
        switch access {
        case .tree:
            try stepper.take(.exclusive, fd: fd, start: LockFileLayout.tree, length: 1, itemPath: path, subtree: true)
        case .read:
            if group == nil,
               OFDLock.apply(.shared, fd: fd, start: LockFileLayout.pending, length: 1 + LockFileLayout.itemLength, wait: false) == .done {
                _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.pending, length: 1, wait: false)
                return
            }
            try withPendingGate(.shared, fd: fd, path: path, stepper: stepper) { () throws(CoordinationError) in
                if let group {
                    try stepper.take(.shared, fd: fd, start: LockFileLayout.groupReader, length: 1, itemPath: path, subtree: false)
                    try takeOtherRows(of: group, fd: fd, path: path, stepper: stepper)
                } else {
                    try stepper.take(.shared, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, itemPath: path, subtree: false)
                }
            }
        case .write:
            if group == nil,
               OFDLock.apply(.exclusive, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, wait: false) == .done {
                return
            }
            try withPendingGate(.exclusive, fd: fd, path: path, stepper: stepper) { () throws(CoordinationError) in
                if let group {
                    try takeOtherRows(of: group, fd: fd, path: path, stepper: stepper)
                    try takeGroupWriterCells(group, fd: fd, path: path, stepper: stepper)
                } else {
                    try stepper.take(.exclusive, fd: fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, itemPath: path, subtree: false)
                }
            }
        }
    }

    private func upgrade(_ holding: Holding, to access: Access, stepper: LockStepper) throws(CoordinationError) {
        let path = holding.file.itemPath
        switch access {
        case .read:
            return
        case .tree:
            try stepper.take(.exclusive, fd: holding.fd, start: LockFileLayout.tree, length: 1, itemPath: path, subtree: true)
        case .write:
            try withPendingGate(.exclusive, fd: holding.fd, path: path, stepper: stepper) { () throws(CoordinationError) in
                if let group = holding.group {
                    try takeGroupWriterCells(group, fd: holding.fd, path: path, stepper: stepper)
                } else {
                    try stepper.take(.exclusive, fd: holding.fd, start: LockFileLayout.itemStart, length: LockFileLayout.itemLength, itemPath: path, subtree: false)
                }
            }
        }
    }

    /// Holds the pending gate around `body`: writers take it exclusively (so new readers queue
    /// behind them), readers take it shared for a moment (so they wait for a queued writer).
    private func withPendingGate(_ kind: OFDLock.Kind, fd: Int32, path: String, stepper: LockStepper,
                                 _ body: () throws(CoordinationError) -> Void) throws(CoordinationError) {
        try stepper.take(kind, fd: fd, start: LockFileLayout.pending, length: 1, itemPath: path, subtree: false)
        defer { _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.pending, length: 1, wait: false) }
        try body()
    }

    private func takeOtherRows(of group: GroupCell, fd: Int32, path: String, stepper: LockStepper) throws(CoordinationError) {
        let below = LockFileLayout.rowStart(group.row) - LockFileLayout.rowsStart
        if below > 0 {
            try stepper.take(.shared, fd: fd, start: LockFileLayout.rowsStart, length: below, itemPath: path, subtree: false)
        }
        let aboveStart = LockFileLayout.rowStart(group.row + 1)
        if aboveStart < LockFileLayout.rowsEnd {
            try stepper.take(.shared, fd: fd, start: aboveStart, length: LockFileLayout.rowsEnd - aboveStart, itemPath: path, subtree: false)
        }
    }

    private func takeGroupWriterCells(_ group: GroupCell, fd: Int32, path: String, stepper: LockStepper) throws(CoordinationError) {
        try stepper.take(.exclusive, fd: fd, start: LockFileLayout.column(group.column), length: 1, itemPath: path, subtree: false)
        try stepper.take(.exclusive, fd: fd, start: LockFileLayout.cell(row: group.row, column: group.column), length: 1, itemPath: path, subtree: false)
    }

    static func row(for purpose: String) -> Int {
        Int(truncatingIfNeeded: StableHash.fnv1a64(purpose.utf8) % UInt64(LockFileLayout.rowCount))
    }
}

/// Hands out lock-file *columns* to group-mode holders: unique among all live holders on the
/// machine, built from the process id (22 bits) and a per-process slot (10 bits).
final class ColumnAllocator: Sendable {
    static let shared = ColumnAllocator()
    private let state = Mutex<(next: Int, free: [Int])>((0, []))
    static let slotBits = 10

    func allocate() -> Int {
        state.withLock { state in
            if let slot = state.free.popLast() { return slot }
            defer { state.next = (state.next + 1) & ((1 << Self.slotBits) - 1) }
            return state.next
        }
    }

    func release(_ slot: Int) {
        guard slot >= 0 else { return }
        state.withLock { $0.free.append(slot) }
    }

    static func column(for slot: Int) -> Int {
        (Int(getpid()) & ((1 << 22) - 1)) << slotBits | slot
    }
}
