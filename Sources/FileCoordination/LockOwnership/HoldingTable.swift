/// What one `LockOwner` has of one item.
enum HoldingSlot {
    /// A thread of the owner is changing the item's holding in the kernel — a fresh lock, an
    /// upgrade, a downgrade, a tree lock ending, the final unlock — outside the owner's lock,
    /// since a kernel call may wait. Meanwhile no other thread of the owner touches the holding:
    /// an acquire waits until the transition ends (`LockOwner.waitForTransition`), a release is
    /// deferred and applied when it ends (`LockOwner.finish`). Every transition is marked so: one
    /// made unmarked (a downgrade once was) can undo another thread's upgrade, or leave a lock on
    /// a descriptor that was just released and kept idle — held for ever by nobody.
    case busy
    /// The item is held, in the kernel, as the holding says.
    case held(DescriptorHolding)
    /// A descriptor kept, unlocked, from the owner's last access of the item, so that its next
    /// access skips the look-ups and the `open`.
    case idle(LockFile, Int32)
}

/// The slots of one `LockOwner`, by item path: usually one or two, so a list beats a hash table.
///
/// A plain value with no lock of its own: the owner's state lock protects it.
struct HoldingTable {
    private struct Entry {
        let path: String
        var slot: HoldingSlot
    }
    private var entries: [Entry] = []

    /// Calls `body` with the slot of `path` (nil: none) to read or change in place: one look-up
    /// instead of a read and a write, and the slot is moved in and out, not copied.
    mutating func update<Result>(_ path: String, _ body: (inout HoldingSlot?) -> Result) -> Result {
        guard let index = entries.lastIndex(where: { $0.path == path }) else {
            var slot: HoldingSlot?
            let result = body(&slot)
            if let slot { entries.append(Entry(path: path, slot: slot)) }
            return result
        }
        var taken = HoldingSlot.busy
        swap(&taken, &entries[index].slot)
        var slot: HoldingSlot? = consume taken
        let result = body(&slot)
        if let slot { entries[index].slot = slot } else { entries.remove(at: index) }
        return result
    }

    subscript(path: String) -> HoldingSlot? {
        get {
            for index in entries.indices.reversed() where entries[index].path == path { return entries[index].slot }
            return nil
        }
        set {
            let index = entries.lastIndex { $0.path == path }
            switch (index, newValue) {
            case let (index?, slot?): entries[index].slot = slot
            case let (nil, slot?): entries.append(Entry(path: path, slot: slot))
            case let (index?, nil): entries.remove(at: index)
            case (nil, nil): break
            }
        }
    }

    /// Calls `body` with each idle descriptor, oldest first (no allocation: this runs at the
    /// end of every coordinator's life).
    func forEachIdle(_ body: (LockFile, Int32) -> Void) {
        for entry in entries {
            if case .idle(let file, let fd) = entry.slot { body(file, fd) }
        }
    }

    /// No holding and no transition under way: only idle descriptors, if anything.
    var holdsNothing: Bool {
        entries.allSatisfy { entry in
            if case .idle = entry.slot { return true }
            return false
        }
    }

    /// Takes out the oldest idle descriptor when more than `limit` are kept.
    mutating func evictOldestIdle(beyond limit: Int) -> (file: LockFile, fd: Int32)? {
        var count = 0
        var oldest: Int?
        for index in entries.indices {
            guard case .idle = entries[index].slot else { continue }
            count += 1
            if oldest == nil { oldest = index }
        }
        guard count > limit, let oldest, case .idle(let file, let fd) = entries[oldest].slot else { return nil }
        entries.remove(at: oldest)
        return (file, fd)
    }
}
