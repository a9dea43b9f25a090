import Foundation
import Glibc
import Synchronization

/// The locks one coordinator holds, with nesting.
///
/// A coordinator never blocks itself: a nested read inside its own write, or a write inside its own
/// read, reuses the same open file description, so the kernel sees one owner and only converts
/// the lock (shared → exclusive and back). Counts say how many accesses of each kind are active.
///
/// *Which* kernel transition an access needs is decided here, from the counts; *how* each
/// transition uses the lock file's bytes, in plain and in group mode, is `LockProtocol`'s.
final class LockOwner: Sendable {
    private struct Holding {
        let file: LockFile
        let fd: Int32
        let mode: LockMode
        var readers = 0
        var writers = 0
        var trees = 0
    }

    /// A holding; a marker that one thread of this owner is changing it in the kernel; or a
    /// descriptor kept, unlocked, from the last access, so the next access of the same item by
    /// this coordinator skips the look-ups and the `open`.
    private enum Slot {
        case busy
        case held(Holding)
        case idle(LockFile, Int32)
    }

    /// Idle descriptors an owner keeps (the oldest goes back to its lock file's pool).
    private static let idleLimit = 4

    private enum Plan {
        case done
        case wait(seenTransitions: Int)
        case upgrade(Holding)
        case fresh(group: String?, reuse: (LockFile, Int32)?)
    }

    /// Who never blocks whom: an owner's own accesses, or every owner sharing a purpose.
    enum GroupKey: Equatable, Sendable {
        case owner(Int)
        case purpose(String)
    }

    /// The paths this owner holds (usually one or two, so a list beats a hash table).
    private struct Slots {
        private struct Entry {
            let path: String
            var slot: Slot
        }
        private var entries: [Entry] = []

        subscript(path: String) -> Slot? {
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

        /// Calls `body` with each holding (transitions under way and idle descriptors are skipped).
        func forEachHeld(_ body: (String, Holding) -> Void) {
            for entry in entries {
                if case .held(let holding) = entry.slot { body(entry.path, holding) }
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

    private struct State {
        var slots = Slots()
        var groupName: String?
        var waitingForBusy = 0
        /// Counts finished transitions, so a waiter can tell that one ended.
        var transitions = 0
        /// Releases made while another thread of this owner had the holding in a kernel
        /// transition (`.busy`): applied by `finish` when the transition ends. Without this, a
        /// read ended during another thread's upgrade was lost, and its lock held for ever.
        var deferredReleases: [String: [Access]] = [:]
    }

    private let state = Locked(State())
    /// Only used when two threads of one owner change the same holding at once (rare), so one
    /// condition serves every owner: a broadcast wakes all such waiters, and each re-checks its
    /// own owner's transition count.
    private static let busyCondition = NSCondition()
    private var busyCondition: NSCondition { Self.busyCondition }
    private static let nextID = Atomic<Int>(0)
    private let id = LockOwner.nextID.add(1, ordering: .relaxed).newValue

    #if DEBUG
    /// Tests only: runs between a release's planning of a downgrade and the kernel call, so a
    /// test can make another thread act inside that window (`LockTransitionTests`).
    let downgradeHookForTests = Locked<(@Sendable () -> Void)?>(nil)
    #endif

    /// The table through which this owner creates missing lock files (its runtime's).
    let lockTable: LockTable
    /// An owner creating lock files through `lockTable` (tests: the process runtime's by default).
    init(lockTable: LockTable = CoordinationRuntime.process.lockTable) {
        self.lockTable = lockTable
    }

    deinit {
        state.withLock { state in state.slots.forEachIdle { file, fd in file.checkin(fd) } }
    }

    /// Makes this owner fit for another coordinator once its own has gone (see
    /// `PresenterLockOwners.recycle`): true when it holds nothing and nobody waits on it; it then
    /// leaves group mode and keeps at most one idle descriptor (its last item's).
    func prepareForReuse() -> Bool {
        settle(keepingIdle: 1, leavingGroup: true)
    }

    /// Makes this owner fit to be kept for its presenter's next coordinator once the current
    /// ones have gone (see `PresenterLockOwners.keep`): true when it holds nothing, nobody waits on
    /// it and it is in no group; it then gives its idle descriptors back to their lock files.
    func prepareForKeeping() -> Bool {
        settle(keepingIdle: 0, leavingGroup: false)
    }

    /// When the owner holds nothing and nobody waits on it — and, unless `leavingGroup` (which
    /// leaves group mode), it is in no group — gives back all but `keepingIdle` idle descriptors
    /// and returns true.
    private func settle(keepingIdle: Int, leavingGroup: Bool) -> Bool {
        let surplus: [(file: LockFile, fd: Int32)]? = state.withLock { state in
            guard state.waitingForBusy == 0, state.slots.holdsNothing, leavingGroup || state.groupName == nil else { return nil }
            state.groupName = nil
            var surplus: [(file: LockFile, fd: Int32)] = []
            while let evicted = state.slots.evictOldestIdle(beyond: keepingIdle) { surplus.append(evicted) }
            return surplus
        }
        guard let surplus else { return false }
        for (file, fd) in surplus { file.checkin(fd) }
        return true
    }

    /// The key that decides which claims never block each other: the purpose when shared,
    /// otherwise a key unique to this owner.
    var groupKey: GroupKey {
        state.withLock { $0.groupName }.map(GroupKey.purpose) ?? .owner(id)
    }

    /// Switches to group mode under `name`. Holdings taken before keep their mode until released.
    func setGroup(_ name: String) {
        state.withLock { $0.groupName = name }
    }

    func holdsTree(_ path: String) -> Bool {
        state.withLock { state in
            if case .held(let holding) = state.slots[path] { return holding.trees > 0 }
            return false
        }
    }

    // MARK: Acquire and release

    typealias Access = LockAccess

    /// Takes `access` on the item `path` for this owner, waiting as `stepper` allows. `locate`
    /// finds the item's lock file (and the lock directory, to create it) — only called when this
    /// owner has no descriptor of it already.
    func acquire(
        _ access: Access, path: String, stepper: LockStepper,
        locate: () throws(CoordinationError) -> (LockFile, LockDirectory)
    ) throws(CoordinationError) {
        var plan: Plan
        while true {
            plan = state.withLock { state -> Plan in
                switch state.slots[path] {
                case .busy?:
                    state.waitingForBusy += 1
                    return .wait(seenTransitions: state.transitions)
                case .held(var holding)?:
                    let needsKernel: Bool
                    switch access {
                    case .read: needsKernel = false
                    case .write: needsKernel = holding.writers == 0
                    case .tree: needsKernel = holding.trees == 0
                    }
                    if needsKernel {
                        state.slots[path] = .busy
                        return .upgrade(holding)
                    }
                    Self.bump(&holding, access, by: 1)
                    state.slots[path] = .held(holding)
                    return .done
                case .idle(let file, let fd)?:
                    state.slots[path] = .busy
                    return .fresh(group: state.groupName, reuse: (file, fd))
                case nil:
                    state.slots[path] = .busy
                    return .fresh(group: state.groupName, reuse: nil)
                }
            }
            guard case .wait(let seen) = plan else { break }
            try waitForTransition(after: seen, stepper.context)
        }

        switch plan {
        case .done, .wait:
            return
        case .upgrade(var holding):
            do {
                try LockProtocol.upgrade(to: access, fd: holding.fd, mode: holding.mode, path: holding.file.itemPath, stepper: stepper)
            } catch {
                finish(path, .held(holding))
                throw error
            }
            Self.bump(&holding, access, by: 1)
            finish(path, .held(holding))
        case .fresh(let groupName, let reuse):
            let holding = try lockFresh(access, path: path, group: groupName, reuse: reuse, stepper: stepper, locate: locate)
            finish(path, .held(holding))
        }
    }

    /// **The one place a descriptor that holds nothing is first locked** for this owner: checks
    /// out (or reuses) a descriptor of the item's lock file, takes `access` on it through
    /// `LockProtocol.acquireFresh`, and returns the new holding with its count set. On failure
    /// nothing stays locked and the slot is cleared. A check that needs the fresh lock held
    /// (for example that the lock file is still the one at its path) goes right after
    /// `acquireFresh` below.
    private func lockFresh(
        _ access: Access, path: String, group groupName: String?, reuse: (LockFile, Int32)?, stepper: LockStepper,
        locate: () throws(CoordinationError) -> (LockFile, LockDirectory)
    ) throws(CoordinationError) -> Holding {
        var file: LockFile?
        var fd: Int32 = -1
        var mode = LockMode.plain
        do {
            if let (kept, keptFD) = reuse {
                (file, fd) = (kept, keptFD)
            } else {
                let (located, directory) = try locate()
                file = located
                fd = try located.checkout { (missing) throws(CoordinationError) -> Int32 in
                    try lockTable.create(missing, in: directory, step: stepper)
                }
            }
            if let groupName { mode = .group(GroupCell.allocate(purpose: groupName)) }
            try LockProtocol.acquireFresh(access, fd: fd, mode: mode, path: path, stepper: stepper)
            // Lock files are reclaimed: the lock must sit on the item's linked lock file.
            try file?.keepLinked(&fd, table: lockTable, stepper: stepper, locate: locate) { (fd) throws(CoordinationError) in
                try LockProtocol.acquireFresh(access, fd: fd, mode: mode, path: path, stepper: stepper)
            }
        } catch {
            if let file, fd >= 0 {
                LockProtocol.releaseAll(fd: fd)
                file.checkin(fd)
            }
            mode.cell?.free()
            finish(path, nil)
            throw error
        }
        guard let file else {
            // Unreachable: `file` is set whenever no error was thrown.
            finish(path, nil)
            throw .lockFailed(path: path, errno: EBADF)
        }
        var holding = Holding(file: file, fd: fd, mode: mode)
        Self.bump(&holding, access, by: 1)
        return holding
    }

    /// Gives back one access of kind `access` on `path`.
    func release(_ access: Access, on path: String) {
        enum Next { case nothing, closeAll(Holding), downgrade(Holding), dropTree(Holding) }
        let next: Next = state.withLock { state in
            if case .busy? = state.slots[path] {
                // Another thread of this owner is changing the holding in the kernel: its
                // `finish` applies this release once the new holding is stored.
                state.deferredReleases[path, default: []].append(access)
                return .nothing
            }
            guard case .held(var holding)? = state.slots[path] else { return .nothing }
            Self.bump(&holding, access, by: -1)
            if holding.readers + holding.writers + holding.trees == 0 {
                // Unlocked outside the lock (below) while marked busy, then kept idle for this
                // owner's next access of the item.
                state.slots[path] = .busy
                return .closeAll(holding)
            }
            // A downgrade is a kernel transition too: marked busy until done, so no other thread
            // of this owner changes the same bytes meanwhile. (Done unmarked, a late downgrade
            // could undo another thread's upgrade, or leave a read on a descriptor that had just
            // been released and kept idle — a lock held for ever by nobody.)
            if access == .write && holding.writers == 0 {
                state.slots[path] = .busy
                return .downgrade(holding)
            }
            if access == .tree && holding.trees == 0 {
                state.slots[path] = .busy
                return .dropTree(holding)
            }
            state.slots[path] = .held(holding)
            return .nothing
        }
        #if DEBUG
        if case .downgrade = next, let hook = downgradeHookForTests.withLock({ $0 }) { hook() }
        #endif
        switch next {
        case .nothing:
            return
        case .closeAll(let holding):
            LockProtocol.releaseAll(fd: holding.fd)
            holding.mode.cell?.free()
            finish(path, .idle(holding.file, holding.fd))
            let evicted = state.withLock { $0.slots.evictOldestIdle(beyond: Self.idleLimit) }
            if let evicted { evicted.file.checkin(evicted.fd) }
        case .dropTree(let holding):
            LockProtocol.dropTree(fd: holding.fd)
            finish(path, .held(holding))
        case .downgrade(let holding):
            LockProtocol.dropWrite(fd: holding.fd, mode: holding.mode, keepingRead: holding.readers > 0)
            finish(path, .held(holding))
        }
    }

    /// Ends a kernel transition: stores the new slot (nil: no holding) and wakes same-owner waiters.
    /// Releases deferred during the transition (`State.deferredReleases`) are applied then.
    private func finish(_ path: String, _ slot: Slot?) {
        let (wake, deferred) = state.withLock { state -> (Bool, [Access]) in
            state.slots[path] = slot
            state.transitions &+= 1
            defer { state.waitingForBusy = 0 }
            var deferred: [Access] = []
            // (Only a holding can have releases waiting: a fresh acquire or a close had none.)
            let waiting = state.deferredReleases.removeValue(forKey: path) ?? []
            if case .held? = slot { deferred = waiting }
            return (state.waitingForBusy > 0, deferred)
        }
        if wake {
            busyCondition.lock()
            busyCondition.broadcast()
            busyCondition.unlock()
        }
        for access in deferred { release(access, on: path) }
    }

    /// Sleeps until a transition of this owner ends after the one seen busy, or the context's
    /// deadline or cancellation. The check and the sleep happen under `busyCondition`, and
    /// `finish` broadcasts under it, so no wake-up is lost.
    private func waitForTransition(after seen: Int, _ context: WaitContext) throws(CoordinationError) {
        let stopObserving = context.onCancel {
            Self.busyCondition.lock(); Self.busyCondition.broadcast(); Self.busyCondition.unlock()
        }
        defer { stopObserving() }
        busyCondition.lock()
        defer { busyCondition.unlock() }
        while state.withLock({ $0.transitions }) == seen {
            try context.check()
            if let deadline = context.deadline {
                _ = busyCondition.wait(until: Date(timeIntervalSinceNow: deadline.secondsFromNow))
            } else {
                busyCondition.wait()
            }
        }
    }

    private static func bump(_ holding: inout Holding, _ access: Access, by delta: Int) {
        switch access {
        case .read: holding.readers += delta
        case .write: holding.writers += delta
        case .tree: holding.trees += delta
        }
    }
}
