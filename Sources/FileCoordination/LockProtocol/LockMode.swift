import Glibc

/// What a holder takes on an item: a read, a write, or the *tree* lock of a directory being
/// deleted, moved or replaced.
enum LockAccess: Sendable { case read, write, tree }

/// How a holding uses the lock file's bytes (see `LockFileLayout`).
///
/// - **plain** — the coordinator's purpose identifier has never been read or set, so nobody else
///   can share it: readers hold R0 + columns shared, writers hold them exclusively.
/// - **group** — the purpose identifier may be shared with other coordinators, here or in other
///   processes, which must not block each other: members hold the other groups' rows shared,
///   readers hold R0 shared, and a writer holds one column and its own cell exclusively.
enum LockMode: Sendable {
    case plain
    case group(GroupCell)

    var cell: GroupCell? {
        if case .group(let cell) = self { return cell }
        return nil
    }
}

/// A group member's place in the lock file: its purpose's row, and a column of its own.
struct GroupCell: Sendable {
    let row: Int
    let column: Int
    /// The per-process slot the column was made from; given back to `ColumnAllocator` on release.
    let columnSlot: Int

    /// A new cell for a holder of `purpose`: its row, and a column unique on the machine.
    static func allocate(purpose: String) -> GroupCell {
        let slot = ColumnAllocator.shared.allocate()
        return GroupCell(row: row(for: purpose), column: ColumnAllocator.column(for: slot), columnSlot: slot)
    }

    func free() { ColumnAllocator.shared.release(columnSlot) }

    static func row(for purpose: String) -> Int {
        Int(truncatingIfNeeded: StableHash.fnv1a64(purpose.utf8) % UInt64(LockFileLayout.rowCount))
    }
}

/// Hands out lock-file *columns* to group-mode holders: unique among all live holders on the
/// machine, built from the process id (22 bits) and a per-process slot (10 bits).
final class ColumnAllocator: Sendable {
    /// Process-wide, not per `CoordinationRuntime`: columns must be unique among all live holders
    /// of the process, whatever their runtime, since they all share the kernel's locks.
    static let shared = ColumnAllocator()
    private let state = Locked<(next: Int, free: [Int])>((0, []))
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
