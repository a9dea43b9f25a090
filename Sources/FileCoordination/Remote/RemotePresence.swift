import Foundation
import Glibc
import Synchronization
import SystemSupport

/// Presenters in other processes, for one `CoordinationRuntime` (Docs/RemotePresenters.md).
///
/// - Publishing: the registry tells it every path it starts or stops indexing (`published` /
///   `withdrawn`, with the registry's lock held). The first one claims a slot of the lock
///   directory's presence table and starts the endpoint at `<lockdir>/@peers/<slot>`, whose
///   thread hands requests from other processes to the runtime's `InProcessDelivery` (so they
///   run on the presenters' queues) and answers lookups from the registry.
/// - Asking: `mayConcern` (the fast path: a few loads, no system call) and `addresses(at:)`
///   (the slow path: a lookup round trip to each candidate process), then `delivery` carries
///   the messages. The messenger asks both through `PresenterDirectory`, beside this process's
///   registry.
///
/// When the table cannot be mapped, or no slot is free, nothing is published or asked, and
/// presenters in other processes are reached only through their change monitors, as before.
///
/// **On by default for the process runtime** (`isEnabled`): the environment variable
/// `CLOUDDOCUMENTS_REMOTE_PRESENTERS=0` turns it off for a process; other runtimes (made for
/// tests, with their own lock directory) are off until a test sets `isEnabled` before registering
/// presenters. Off, nothing is published and `mayConcern` is one load.
final class RemotePresence: Sendable {
    static let environmentVariable = "CLOUDDOCUMENTS_REMOTE_PRESENTERS"

    /// Whether this runtime publishes its presenters and messages other processes' presenters.
    var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }
    private let enabled: Atomic<Bool>

    /// The lock directory's path, or nil when it is unusable (the runtime's, resolved lazily).
    private let directoryPath: @Sendable () -> String?
    /// 0: not resolved yet; 1: no table; otherwise the `PresenceTable` (kept alive by
    /// `PresenceTable.of`'s process-wide cache), as an unretained pointer.
    private let tableBits = Atomic<UInt>(0)
    let delivery = RemoteDelivery()
    /// How many messages from other processes may wait on this runtime's presenter queues at once.
    let deliveryBudget = RemoteDeliveryBudget(limit: RemoteDeliveryBudget.standardLimit)
    /// Whether presenters in other processes are asked to save (`savePresentedItemChanges`) before
    /// a read and for `.forMerging`. The request goes out *before* the asker takes its locks, so a
    /// presenter that answers by coordinating a write (as CloudDocument does) takes its own lock
    /// and never waits for the asker's (Docs/RemotePresenters.md, *Invariants*). On by default;
    /// the environment variable `CLOUDDOCUMENTS_REMOTE_SAVES=0` turns it off for a process (other
    /// processes' presenters then only relinquish, and a reader gets the bytes last saved).
    var asksForSaves: Bool {
        get { savesAsked.load(ordering: .relaxed) }
        set { savesAsked.store(newValue, ordering: .relaxed) }
    }
    private let savesAsked = Atomic<Bool>(ProcessInfo.processInfo.environment[RemotePresence.savesEnvironmentVariable] != "0")
    /// The environment variable that turns save requests to other processes off (`0`).
    static let savesEnvironmentVariable = "CLOUDDOCUMENTS_REMOTE_SAVES"

    /// Whether presenters in other processes are asked to relinquish *before* the asker takes its
    /// locks (`PresenterMessenger.relinquishElsewhereBeforeLocking`), so no lock is held across
    /// the round trip. On by default; `CLOUDDOCUMENTS_REMOTE_EARLY_RELINQUISH=0` turns it off for a
    /// process (they are then asked with the locks held, as presenters of this process are).
    var relinquishesBeforeLocking: Bool {
        get { earlyRelinquish.load(ordering: .relaxed) }
        set { earlyRelinquish.store(newValue, ordering: .relaxed) }
    }
    private let earlyRelinquish = Atomic<Bool>(ProcessInfo.processInfo.environment[RemotePresence.earlyRelinquishEnvironmentVariable] != "0")
    /// The environment variable that turns early relinquishment off (`0`).
    static let earlyRelinquishEnvironmentVariable = "CLOUDDOCUMENTS_REMOTE_EARLY_RELINQUISH"

    /// How long a coordination waits for its locks while presenters in other processes have
    /// relinquished to it early (default 100 ms). Past it, it gives the relinquishments back
    /// (their reacquirers), waits for the locks as long as it must, and asks again with the locks
    /// held: a presenter whose own coordinated access, holding the lock we wait for, waits for
    /// our reacquirer is then never waited for longer than this (invariant 1 of
    /// Docs/RemotePresenters.md). Not a cut-off: nothing is skipped, the access only takes the
    /// slower order.
    var earlyRelinquishWindow: Duration {
        get { .microseconds(earlyWindowMicroseconds.load(ordering: .relaxed)) }
        set {
            let (seconds, attoseconds) = newValue.components
            earlyWindowMicroseconds.store(Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000), ordering: .relaxed)
        }
    }
    private let earlyWindowMicroseconds = Atomic<Int>(100_000)

    /// How long a coordination **without a timeout** waits for another process: a lookup, a
    /// relinquishment, a save or deletion request (default 10 s). When it passes, that process
    /// counts as having answered with the protocol's default (no presenters, relinquished,
    /// completed without error), logged, and counted in `RemoteLog.cutOffCount`; an answer that
    /// comes later is dropped (a late reacquirer is sent back at once). A coordination with a
    /// `timeout` waits up to that timeout instead, and fails with `.timedOut`, as for every other
    /// wait. No wait cycle between processes can hold locks (invariants 1–3 of
    /// Docs/RemotePresenters.md), so this limit is reached only when a process does not answer at
    /// all — stopped (`SIGSTOP`), its main queue blocked by something else than a coordination,
    /// or a presenter that never calls its handler — never in ordinary editing.
    var answerLimit: Duration {
        get { .milliseconds(answerLimitMilliseconds) }
        set {
            let (seconds, attoseconds) = newValue.components
            answerLimitStorage.store(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000), ordering: .relaxed)
        }
    }
    /// `answerLimit` in whole milliseconds.
    var answerLimitMilliseconds: Int { answerLimitStorage.load(ordering: .relaxed) }
    private let answerLimitStorage = Atomic<Int>(10_000)

    private let serving = Locked<Serving>(Serving())

    /// This runtime's registered presenters that may have unsaved changes (RemotePresence+Clean).
    /// A leaf lock: nothing else is locked with it held.
    let unsaved = Locked<UnsavedPresenters>(UnsavedPresenters())

    /// The claimed slot, if any (for its clean mark).
    var currentClaim: PresenceTable.SlotClaim? { serving.withLock { $0.claim } }

    private struct Serving {
        var registry: PresenterRegistry?
        var local: InProcessDelivery?
        var claim: PresenceTable.SlotClaim?
        var endpoint: RemoteEndpoint?
        var failed = false
    }

    /// `enabled`: the initial `isEnabled` (the process runtime passes the environment's choice).
    init(enabled: Bool = false, directoryPath: @escaping @Sendable () -> String?) {
        self.enabled = Atomic(enabled)
        self.directoryPath = directoryPath
    }

    /// False only when the environment turns remote presenters off (`CLOUDDOCUMENTS_REMOTE_PRESENTERS=0`).
    static var enabledByEnvironment: Bool { ProcessInfo.processInfo.environment[environmentVariable] != "0" }

    /// Connects the serving side to the runtime's registry and in-process delivery.
    func attach(registry: PresenterRegistry, delivery: InProcessDelivery) {
        serving.withLock { $0.registry = registry; $0.local = delivery }
    }

    deinit {
        let (endpoint, claim) = serving.withLock { ($0.endpoint, $0.claim) }
        endpoint?.close()
        if let claim { Self.forgetAtExit(claim) }
        claim?.release()
    }

    // MARK: Giving the slot back when the process exits

    /// Claims of runtimes still alive, with their socket paths: released by an `atexit` handler,
    /// so a process that exits normally leaves no slot in use and no socket file behind (one
    /// that is killed leaves both, for the next claimer or asker to reap).
    private static let releasedAtExit = Locked<[(claim: PresenceTable.SlotClaim, socket: String)]>([])
    private static let exitHandlerInstalled = Atomic<Bool>(false)

    private static func releaseAtExit(_ claim: PresenceTable.SlotClaim, socket: String) {
        releasedAtExit.withLock { $0.append((claim, socket)) }
        if !exitHandlerInstalled.exchange(true, ordering: .acquiringAndReleasing) {
            _ = atexit(releaseRemotePresenceAtExit)
        }
    }

    private static func forgetAtExit(_ claim: PresenceTable.SlotClaim) {
        releasedAtExit.withLock { $0.removeAll { $0.claim === claim } }
    }

    /// Unlinks each socket and releases each claim (the endpoint threads are not joined: the
    /// process is ending, and `exit` may be called from one of them).
    fileprivate static func releaseAll() {
        let claims: [(claim: PresenceTable.SlotClaim, socket: String)] = releasedAtExit.withLock { list in
            let all = list
            list.removeAll()
            return all
        }
        for entry in claims {
            _ = PathBytes.withCString(entry.socket) { unlink($0) }
            entry.claim.release()
        }
    }

    /// The lock directory's presence table, mapped at the first use; nil when there is none.
    @inline(__always)
    func table() -> PresenceTable? {
        let bits = tableBits.load(ordering: .acquiring)
        if bits > 1, let pointer = UnsafeRawPointer(bitPattern: bits) {
            return Unmanaged<PresenceTable>.fromOpaque(pointer).takeUnretainedValue()
        }
        if bits == 1 { return nil }
        let table = directoryPath().flatMap { PresenceTable.of(directoryPath: $0) }
        let resolved = table.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 1
        tableBits.store(resolved, ordering: .releasing)
        return table
    }

    // MARK: Asking

    /// False only when no other process can present the item at `path` or a directory above
    /// it. Costs a few memory loads (one when no other process presents anything).
    @inline(__always)
    func mayConcern(_ path: String) -> Bool {
        guard isEnabled, let table = table() else { return false }
        let slots = table.candidates(forItemAt: path, excluding: table.ownSlots.load(ordering: .relaxed))
        return slots != 0 && delivery.unknown(slots, at: path, table: table) != 0
    }

    /// False only when no other process can present something strictly inside `path` (the slow
    /// path of deletes and moves of directories). A few memory loads.
    func mayConcernInside(_ path: String) -> Bool {
        guard isEnabled, let table = table() else { return false }
        return table.candidates(inside: path, excluding: table.ownSlots.load(ordering: .relaxed)) != 0
    }

    /// The presenters in other processes of `path`, of the directories above it and (with
    /// `inside`) of items inside it, asked of every candidate process. Each address carries the
    /// path its presenter presents, which tells which of the three it is.
    ///
    /// `rememberedAs`: the path under which `RemoteDelivery.lastFound` keeps the answer (the item's,
    /// when the lookup is of the package that contains it); `path` when nil.
    func addresses(at path: String, inside: Bool = false, rememberedAs: String? = nil,
                   context: WaitContext) throws(CoordinationError) -> [PresenterAddress] {
        guard isEnabled, let table = table(), let folder = socketFolder() else { return [] }
        let own = table.ownSlots.load(ordering: .relaxed)
        let candidates = table.candidates(forItemAt: path, excluding: own)
        var slots = candidates == 0 ? 0 : delivery.unknown(candidates, at: path, table: table)
        var scope = RemoteLookup.Scope.concerning
        if inside {
            let within = table.candidates(inside: path, excluding: own)
            if within != 0 {
                slots |= within
                scope = .all
            }
        }
        guard slots != 0 else { return [] }
        return try delivery.lookup(path, scope: scope, slots: slots, table: table, socketFolder: folder,
                                   rememberedAs: rememberedAs, context: context, limitMilliseconds: answerLimitMilliseconds)
    }

    /// Records, while a coordination on the **main queue** waits for other processes (the lookups
    /// and answers of `PresenterMessenger.prepare`), which processes it waits for: `candidates`
    /// are the slots that may present the items. Another process's save request finds it there
    /// (`SlotClaim.mainQueueWaitsReach`) and is answered without saving instead of waiting for a
    /// main queue that waits for the asker. Returns the closure that ends the record; nil (and
    /// nothing recorded) off the main queue, or when this process has no slot (nobody can ask it
    /// anything). Costs a queue-specific lookup, only on the slow path.
    func recordMainQueueWait(for candidates: () -> UInt64) -> (() -> Void)? {
        guard MainQueueCheck.isMainQueue, let claim = serving.withLock({ $0.claim }) else { return nil }
        let slots = candidates()
        guard slots != 0 else { return nil }
        let previous = claim.addMainQueueWaits(slots)
        return { claim.restoreMainQueueWaits(previous) }
    }

    /// The slots of other processes that may present the item at `path`, a folder above it or,
    /// with `inside`, something inside it (for `recordMainQueueWait`).
    func candidateSlots(at path: String, inside: Bool) -> UInt64 {
        guard isEnabled, let table = table() else { return 0 }
        let own = table.ownSlots.load(ordering: .relaxed)
        return table.candidates(forItemAt: path, excluding: own) | (inside ? table.candidates(inside: path, excluding: own) : 0)
    }

    private func socketFolder() -> String? {
        directoryPath().map { $0 + "/@peers" }
    }

    // MARK: Publishing (called by the registry, its lock held)

    /// This runtime now presents `path` (once more). With the registry's lock held (asserted), so
    /// the table's filters change in the registry's order.
    func published(_ path: String) {
        guard isEnabled else { return }
        serving.withLock { serving in
            serving.registry?.assertLockHeld("RemotePresence.published")
            guard let claim = claim(&serving) else { return }
            claim.add(path)
        }
    }

    /// This runtime presents `path` once less. With the registry's lock held (asserted).
    func withdrawn(_ path: String) {
        serving.withLock { serving in
            serving.registry?.assertLockHeld("RemotePresence.withdrawn")
            serving.claim?.remove(path)
        }
    }

    /// The slot, claimed (and the endpoint started) on first use.
    private func claim(_ serving: inout Serving) -> PresenceTable.SlotClaim? {
        if let claim = serving.claim { return claim }
        guard !serving.failed, let registry = serving.registry, let local = serving.local else { return nil }
        serving.failed = true  // until everything below worked
        guard let table = table(), let folder = socketFolder() else { return nil }
        guard let claim = PresenceTable.SlotClaim.claim(in: table) else {
            RemoteLog.dropped("presence: every slot of \(table.path) is taken; presenters here are not reached from other processes")
            return nil
        }
        _ = PathBytes.withCString(folder) { mkdir($0, 0o700) }
        let handler = Self.handler(registry: registry, local: local, claim: claim, budget: deliveryBudget)
        do throws(RemoteTransportError) {
            serving.endpoint = try RemoteEndpoint(path: folder + "/\(claim.slot)", handler: handler)
        } catch {
            RemoteLog.dropped("presence: no endpoint (\(error)); presenters here are not reached from other processes")
            claim.release()
            return nil
        }
        serving.claim = claim
        serving.failed = false
        Self.releaseAtExit(claim, socket: folder + "/\(claim.slot)")
        return claim
    }

    /// What the endpoint does with a frame from another process (on the endpoint's thread).
    private static func handler(registry: PresenterRegistry, local: InProcessDelivery,
                                claim: PresenceTable.SlotClaim, budget: RemoteDeliveryBudget) -> RemoteEndpoint.Handler {
        { frame, reply in
            switch frame {
            case .request(let remote):
                let request = PresenterRequest(presenter: PresenterID(process: PresenterID.thisProcess, number: UInt(truncatingIfNeeded: remote.presenterNumber)),
                                               presentedPath: remote.presentedPath, message: remote.message, borrow: nil)
                guard request.expectedAnswer != .none else {
                    return deliverNotification(request, registry: registry, local: local, budget: budget)
                }
                if request.expectedAnswer == .completion, claim.mainQueueWaitsReach(process: reply.peer.pid) {
                    // A wait cycle: our main queue waits for the asker, whose coordination waits
                    // for this answer, and a document saves (or closes) on its main queue.
                    // Answered at once, without doing it: the asker goes on with the bytes on
                    // disk (Docs/RemotePresenters.md, invariant 4).
                    RemoteLog.unsaved("not answering \(remote.message.logName) for process \(reply.peer.pid) on our main queue: it waits for that process (a wait cycle)")
                    reply.send(.answer(RemoteAnswer(id: remote.id, outcome: Self.unansweredOutcome(of: request))))
                    return
                }
                if request.message.isRelinquishOrSave, DownloadWaits.concern(request.presentedPath) {
                    // This process waits for the item's download, which this request's write
                    // lands: nothing is on disk to relinquish or save, and the presenter's queue
                    // may be the waiting one (see DownloadWaits).
                    reply.send(.answer(RemoteAnswer(id: remote.id, outcome: Self.unansweredOutcome(of: request))))
                    return
                }
                if case .accommodateDeletion = request.message {
                    // The asker deletes the item once answered: this process's change monitor
                    // must not report that deletion a second time.
                    registry.monitor.noteAnnouncedDeletion(request.presentedPath)
                }
                guard budget.take() else {
                    // A flood (Docs/RemotePresenters.md, "Hostile peers"): answered as the
                    // protocol's defaults would, without queueing anything more.
                    budget.refused("a \(remote.message.logName) request from process \(reply.peer.pid)")
                    reply.send(.answer(RemoteAnswer(id: remote.id, outcome: Self.unansweredOutcome(of: request))))
                    return
                }
                local.send(request) { answer in
                    budget.give()
                    let outcome: RemoteAnswer.Outcome
                    switch answer {
                    case .relinquished(let reacquirer): outcome = .relinquished(reacquirer: reacquirer?.value)
                    case .completed(let error): outcome = .completed(error.map(RemoteErrorDescription.init(describing:)))
                    }
                    reply.send(.answer(RemoteAnswer(id: remote.id, outcome: outcome)))
                }
            case .lookup(let lookup):
                var found: [PresenterAddress] = []
                if lookup.scope.contains(.item) { found += registry.addresses(at: lookup.path) }
                if lookup.scope.contains(.ancestors) { found += registry.addressesOfAncestors(of: lookup.path) }
                if lookup.scope.contains(.inside) { found += registry.addressesInside(lookup.path) }
                let entries = found.prefix(RemoteMessageCodec.entryLimit).map {
                    RemoteLookupAnswer.Entry(presenterNumber: UInt64($0.id.number), path: $0.path)
                }
                reply.send(.lookupAnswer(RemoteLookupAnswer(id: lookup.id, entries: Array(entries))))
            case .answer, .lookupAnswer:
                RemoteLog.dropped("an answer from process \(reply.peer.pid) on a serving connection")
            }
        }
    }
}

extension RemotePresence {
    /// Hands a notification from another process to the presenter, keeping this process's view
    /// consistent: a change already reported by the change monitor (same stamp) is not reported
    /// again, and a move re-keys the registry — every presenter at or inside the old path is told
    /// once, whichever of the message and the change monitor comes first.
    fileprivate static func deliverNotification(_ request: PresenterRequest, registry: PresenterRegistry, local: InProcessDelivery,
                                                budget: RemoteDeliveryBudget) {
        switch request.message {
        case .itemDidChange:
            guard registry.monitor.claimAnnouncedChange(request.presentedPath) else { return }
            send(request, registry: registry, local: local, budget: budget)
        case .itemDidMove(let url):
            let newPath = PathBytes.path(of: url)
            for moved in registry.move(from: request.presentedPath, to: newPath) {
                // The registry has moved the presenter already: a move dropped for the budget
                // still leaves this process's view right (the change monitor tells the presenter).
                send(PresenterRequest(presenter: moved.id, presentedPath: moved.new,
                                      message: .itemDidMove(to: CanonicalPath.url(for: moved.new)), borrow: nil),
                     registry: registry, local: local, budget: budget)
            }
        default:
            send(request, registry: registry, local: local, budget: budget)
        }
    }

    /// Hands one notification to its presenter's queue, within `budget`.
    private static func send(_ request: PresenterRequest, registry: PresenterRegistry, local: InProcessDelivery,
                             budget: RemoteDeliveryBudget) {
        if case .reacquire = request.message {
            // Runs a reacquirer this process handed out (bounded by `InProcessDelivery`), even
            // for a presenter unregistered since.
            local.send(request, answer: nil)
            return
        }
        guard let presenter = registry.presenter(request.presenter) else { return }  // gone meanwhile
        guard budget.take() else {
            budget.refused("a \(request.message.logName) notification")
            return
        }
        local.send(request, answer: nil)
        budget.give(after: presenter.presentedItemOperationQueue)
    }
}

/// The `atexit` handler (a plain function: C needs a pointer without context).
private func releaseRemotePresenceAtExit() {
    RemotePresence.releaseAll()
}

extension RemotePresence {
    /// The answer sent for a request this process does not carry out (a wait cycle, a flood):
    /// the message's ``PresenterMessage/unansweredDefault(path:)`` on the wire.
    static func unansweredOutcome(of request: PresenterRequest) -> RemoteAnswer.Outcome {
        switch request.message.unansweredDefault(path: request.presentedPath) {
        case .relinquished?: return .relinquished(reacquirer: nil)
        case .completed(let error)?: return .completed(error.map(RemoteErrorDescription.init(describing:)))
        case nil: return .completed(nil)
        }
    }
}
