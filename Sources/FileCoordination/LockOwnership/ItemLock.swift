/// One lock on one item: the item's canonical path, and whether it is read, written, or — for a
/// directory being deleted, moved or replaced — locked with everything inside (`.tree`).
///
/// The one answer to "what is locked", wherever it is kept: the locks a coordination took, in
/// order (`HeldLocks.taken`), what the running accessor holds on this thread (`ThreadClaims`), and
/// what a coordination asks for (`LockClaim.lock`). It says nothing about *how* the kernel holds
/// it: that is a `DescriptorHolding` (a descriptor, its mode and counts of nested accesses), of
/// which a `LockOwner` keeps one per item.
struct ItemLock: Sendable, Equatable {
    let path: String
    let access: LockAccess

    /// Others may not hold the item at the same time (a write, or a tree lock).
    var isExclusive: Bool { access != .read }

    /// The lock covers every item inside `path` too.
    var coversSubtree: Bool { access == .tree }
}
