import Foundation
import Glibc
import Synchronization

/// The locks one coordinator holds, with nesting.
///
/// A coordinator never blocks itself: a nested read inside its own write, or a write inside its own
/// read, reuses the same open file description, so the kernel sees one owner and only converts
/// the lock (shared → exclusive and back). Each item's `DescriptorHolding` counts how many
/// accesses of each kind are active.
///
/// *Which* kernel transition an access needs is decided here, from the counts; *how* each
/// transition uses the lock file's bytes, in plain and in group mode, is `LockProtocol`'s.
///
/// **Threads.** Several threads may use one owner at once (the coordinators of one presenter share
/// it). `state` — one lock — protects the holding table, the group, the transition count and the
/// deferred releases, and is never held across a kernel call that can wait. A kernel call on an
/// item's descriptor is made outside it, with the item's slot marked `.busy` (see
/// `HoldingSlot.busy`) from the decision until `finish` stores the outcome: an acquire meeting
/// `.busy` sleeps on `busyCondition` until a transition ends; a release meeting it is deferred to
/// `finish`. Two transitions of the hot path are made under the lock instead, since their kernel
/// calls never wait: the non-blocking relock of an idle descriptor in plain mode
/// (`DescriptorHolding.relockIdle`; when it would wait, the usual busy-marked route follows) and
/// the final unlock of a plain holding. Made so, they take the lock once instead of twice, and no
/// other thread of the owner can see the slot between the kernel call and its new state.
final class LockOwner: Sendable {
    /// What an acquire does once it has looked at the item's slot.
    private enum AcquirePlan {
        /// Counted on the holding; the kernel already holds enough.
        case done
        /// Another thread of this owner is in a transition of the item: wait for it, then look again.
        case wait
        /// The slot is marked busy: add the access to this holding in the kernel.
        case upgrade(DescriptorHolding)
        /// The slot is marked busy: lock a descriptor (the idle one kept, if any) afresh.
        case fresh(group: String?, reuse: (LockFile, Int32)?)
    }

    /// What a release does once it has looked at the item's slot.
    private enum ReleasePlan {
        /// Counted off the holding; the kernel holds what it should.
        case done
        /// Another thread of this owner is in a transition of the item: its `finish` applies the release.
        case deferred
        /// The slot is marked busy: the last access ended — unlock everything, keep the descriptor idle.
        case releaseAll(DescriptorHolding)
        /// The slot is marked busy: the last write ended — keep a read if one remains, else only the tree.
        case dropWrite(DescriptorHolding)
        /// The slot is marked busy: the last tree lock ended.
        case dropTree(DescriptorHolding)
        /// The last access of a plain holding ended and was unlocked under the lock: the slot is idle.
        case releasedIdle
    }

    /// Idle descriptors an owner keeps (the oldest goes back to its lock file's pool).
    private static let idleLimit = 4

    /// Who never blocks whom: an owner's own accesses, or every owner sharing a purpose.
    enum GroupKey: Equatable, Sendable {
        case owner(Int)
        case purpose(String)
    }

    private struct State {
        var slots = HoldingTable()
        var groupName: String?
        var waitingForBusy = 0
        /// Counts finished transitions, so a waiter can tell that one ended.
        var transitions = 0
        /// Releases made while another thread of this owner had the holding in a kernel
        /// transition (`.busy`): applied by `finish` when the transition ends. Without this, a
        /// read ended during another thread's upgrade was lost, and its lock held for ever.
        var deferredReleases: [String: [LockAccess]] = [:]
    }

    private let state = Locked(State())
    /// Only used when two threads of one owner change the same holding at once (rare), so one
    /// condition serves every owner of the runtime (`LockTable.ownerTransitions`): a broadcast
    /// wakes all such waiters, and each re-checks its own owner's transition count.
    private var busyCondition: NSCondition { lockTable.ownerTransitions }
    /// Process-wide on purpose (listed on `CoordinationRuntime`): `ThreadClaims` compares group
    /// keys of owners of every runtime a thread coordinates in, so `.owner(id)` must be unique in
    /// the process, not only in a runtime.
    private static let nextID = Atomic<Int>(0)
    private let id = LockOwner.nextID.add(1, ordering: .relaxed).newValue

    #if DEBUG
    /// Tests only: runs between a release's planning of a downgrade and the kernel call, so a
    /// test can make another thread act inside that window (`LockTransitionTests`).
    let downgradeHookForTests = Locked<(@Sendable () -> Void)?>(nil)
    /// Tests only: runs in `HeldLocks` after each claim of an access is taken (with its path), so
    /// a test can act between two claims of one access (`TreeBackOffTests`).
    let claimTakenHookForTests = Locked<(@Sendable (String) -> Void)?>(nil)
    #endif

    /// The table through which this owner creates missing lock files (its runtime's).
    let lockTable: LockTable
    /// An owner of the runtime whose table is `lockTable`: it creates lock files through it.
    init(lockTable: LockTable) {
        self.lockTable = lockTable
    }

    deinit {
        state.withLock { state in state.slots.forEachIdle { file, fd in file.checkin(fd) } }
    }

    /// Asserts, in debug builds, that the calling thread does not hold this owner's lock: kernel
    /// calls and waits are made outside it (see **Threads** above).
    @inline(__always)
    func assertStateNotHeld(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        state.assertNotHeld(what() + " is made outside the lock owner's lock", file: file, line: line)
    }

    // MARK: Reuse between coordinators

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

    // MARK: Group

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

    /// Takes `access` on the item `path` for this owner, waiting as `stepper` allows. `locate`
    /// finds the item's lock file (and the lock directory, to create it) — only called when this
    /// owner has no descriptor of it already.
    func acquire(
        _ access: LockAccess, path: String, stepper: LockStepper,
        locate: () throws(CoordinationError) -> (LockFile, LockDirectory)
    ) throws(CoordinationError) {
        var plan: AcquirePlan
        while true {
            var seenTransitions = 0
            plan = state.withLock { state in
                let groupName = state.groupName
                let plan = state.slots.update(path) { slot -> AcquirePlan in
                    // The hot path: this owner's idle descriptor of the item, locked again at once.
                    if groupName == nil, access != .tree, case .idle(let file, let fd)? = slot,
                       let holding = DescriptorHolding.relockIdle(access, file: file, fd: fd) {
                        slot = .held(holding)
                        return .done
                    }
                    return Self.plan(acquiring: access, &slot, group: groupName)
                }
                if case .wait = plan {
                    state.waitingForBusy += 1
                    seenTransitions = state.transitions
                }
                return plan
            }
            guard case .wait = plan else { break }
            try waitForTransition(after: seenTransitions, stepper.context)
        }

        switch plan {
        case .done, .wait:
            return
        case .upgrade(var holding):
            do {
                try LockProtocol.upgrade(to: access, fd: holding.fd, mode: holding.mode, path: holding.file.itemPath,
                                         pendingWriters: holding.file.pendingWriters, stepper: stepper)
            } catch {
                finish(path, .held(holding))
                throw error
            }
            holding.count(access, by: 1)
            finish(path, .held(holding))
        case .fresh(let groupName, let reuse):
            let holding: DescriptorHolding
            do {
                holding = try DescriptorHolding.lockFresh(
                    access, path: path, group: groupName, reuse: reuse, table: lockTable, stepper: stepper, locate: locate)
            } catch {
                finish(path, nil)  // nothing stays locked, and the descriptor is checked in
                throw error
            }
            finish(path, .held(holding))
        }
    }

    /// Gives back one access of kind `access` on `path`.
    func release(_ access: LockAccess, on path: String) {
        var evicted: (file: LockFile, fd: Int32)?
        let plan: ReleasePlan = state.withLock { state in
            let plan = state.slots.update(path) { slot -> ReleasePlan in
                let plan = Self.plan(releasing: access, &slot)
                // The hot path: the unlock never waits, so it is made here and the slot goes
                // straight back to idle (no busy mark, no second trip through the lock).
                if case .releaseAll(let holding) = plan, case .plain = holding.mode {
                    LockProtocol.releaseAll(fd: holding.fd)
                    slot = .idle(holding.file, holding.fd)
                    return .releasedIdle
                }
                return plan
            }
            switch plan {
            case .deferred: state.deferredReleases[path, default: []].append(access)
            case .releasedIdle: evicted = state.slots.evictOldestIdle(beyond: Self.idleLimit)
            default: break
            }
            return plan
        }
        if let evicted { evicted.file.checkin(evicted.fd) }
        #if DEBUG
        if case .dropWrite = plan, let hook = downgradeHookForTests.withLock({ $0 }) { hook() }
        #endif
        switch plan {
        case .done, .deferred, .releasedIdle:
            return
        case .releaseAll(let holding):
            LockProtocol.releaseAll(fd: holding.fd)
            holding.mode.cell?.free()
            finish(path, .idle(holding.file, holding.fd))
        case .dropTree(let holding):
            LockProtocol.dropTree(fd: holding.fd)
            finish(path, .held(holding))
        case .dropWrite(let holding):
            LockProtocol.dropWrite(fd: holding.fd, mode: holding.mode, keepingRead: holding.readers > 0)
            finish(path, .held(holding))
        }
    }

    /// Decides what acquiring `access` takes, given the item's `slot` (under `state`'s lock): counts
    /// it on the holding when the kernel already holds enough, otherwise marks the slot busy for the
    /// transition the caller then makes outside the lock.
    private static func plan(acquiring access: LockAccess, _ slot: inout HoldingSlot?, group: String?) -> AcquirePlan {
        switch slot {
        case .busy?:
            return .wait
        case .held(var holding)?:
            if holding.needsKernel(toAdd: access) {
                slot = .busy
                return .upgrade(holding)
            }
            holding.count(access, by: 1)
            slot = .held(holding)
            return .done
        case .idle(let file, let fd)?:
            slot = .busy
            return .fresh(group: group, reuse: (file, fd))
        case nil:
            slot = .busy
            return .fresh(group: group, reuse: nil)
        }
    }

    /// Decides what releasing `access` takes, given the item's `slot` (under `state`'s lock): counts
    /// it off the holding, and marks the slot busy when the kernel must change.
    ///
    /// Every kernel change is marked — the downgrade and the tree drop too, so no other thread of
    /// this owner changes the same bytes meanwhile. (Done unmarked, a late downgrade could undo
    /// another thread's upgrade, or leave a read on a descriptor that had just been released and
    /// kept idle — a lock held for ever by nobody.) A slot already busy is another thread's
    /// transition: the release is deferred to its `finish`.
    private static func plan(releasing access: LockAccess, _ slot: inout HoldingSlot?) -> ReleasePlan {
        if case .busy? = slot { return .deferred }
        guard case .held(var holding)? = slot else { return .done }
        holding.count(access, by: -1)
        if holding.hasNoAccess {
            // Unlocked outside the lock while marked busy, then kept idle for this owner's next
            // access of the item.
            slot = .busy
            return .releaseAll(holding)
        }
        if access == .write && holding.writers == 0 {
            slot = .busy
            return .dropWrite(holding)
        }
        if access == .tree && holding.trees == 0 {
            slot = .busy
            return .dropTree(holding)
        }
        slot = .held(holding)
        return .done
    }

    /// Ends a kernel transition: stores the new slot (nil: no holding) and wakes same-owner waiters.
    /// Releases deferred during the transition (`State.deferredReleases`) are applied then. A slot
    /// that became idle may push the oldest idle descriptor beyond `idleLimit`: it is checked in.
    private func finish(_ path: String, _ slot: HoldingSlot?) {
        let (wake, deferred, evicted) = state.withLock { state -> (Bool, [LockAccess], (file: LockFile, fd: Int32)?) in
            state.slots[path] = slot
            state.transitions &+= 1
            defer { state.waitingForBusy = 0 }
            var deferred: [LockAccess] = []
            // (Only a holding can have releases waiting: a fresh acquire or a close had none.)
            // Checked for emptiness first: hashing the path costs more than the rest of `finish`.
            if !state.deferredReleases.isEmpty, let waiting = state.deferredReleases.removeValue(forKey: path),
               case .held? = slot {
                deferred = waiting
            }
            var evicted: (file: LockFile, fd: Int32)?
            if case .idle? = slot { evicted = state.slots.evictOldestIdle(beyond: Self.idleLimit) }
            return (state.waitingForBusy > 0, deferred, evicted)
        }
        if let evicted { evicted.file.checkin(evicted.fd) }
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
        let condition = busyCondition
        let stopObserving = context.onCancel {
            condition.lock(); condition.broadcast(); condition.unlock()
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
}
