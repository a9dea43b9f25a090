import Foundation
import FileCoordination
import SystemSupport

/// A live query over the files of ubiquity containers or any folder: Apple's `NSMetadataQuery`,
/// Swift-native. (`import FoundationCompatibility` gives the `NSMetadataQuery` class itself.)
///
///     let query = MetadataQuery(scopes: [.ubiquitousDocuments],
///                               predicate: try MetadataItemPredicate(format: "%K LIKE '*.txt'", "kMDItemFSName"),
///                               operationQueue: queue) { event in
///         if case .didUpdate(let update) = event { print(update.added.map(\.name)) }
///     }
///     try query.start()
///
/// `start()` walks the scopes on a thread of the query's own (`didStartGathering`,
/// `gatheringProgress`, `didFinishGathering`), then keeps the results up to date with `inotify`
/// until `stop()`: files and folders created, changed, renamed, moved or deleted anywhere under a
/// scope — by a coordinated writer, any other program, or a sync tool — arrive as `didUpdate`
/// batches. Hidden names (starting with `.`), sync tools' temporary files and conflict copies are
/// never results; an item with conflict copies beside it has `hasUnresolvedConflicts`.
///
/// ## Threading
/// Every member may be called from any thread. The handler runs on `operationQueue` (the main
/// queue when nil, as on Apple platforms), one event at a time, in order; `results` changes only
/// just before the handler is called with an event, so it agrees with the event the handler
/// receives. The predicate runs on the query's thread.
///
/// ## Live-update guarantees
/// Every change is reported once: changes close together are coalesced into one batch (an item
/// added then changed is reported added, with its latest values). A deleted file's removal is held
/// for 200 ms: a file deleted and put back under its name meanwhile — how Syncthing delivers an
/// update — is one change of the same item, never a removal while it exists; other changes are
/// delivered meanwhile. When the kernel's event queue overflows, the query walks the scopes again
/// and reports the differences, so nothing is lost or duplicated (a rename seen only through such
/// a rescan is reported as a removal and an addition).
public final class MetadataQuery: Sendable {
    /// Where to look.
    public let scopes: [MetadataQueryScope]
    /// Which items are results.
    public let predicate: MetadataItemPredicate
    /// The order of `results` (empty: the order found).
    public let sortKeys: [MetadataQuerySortKey]
    /// How long changes are collected before a `didUpdate` is sent, in seconds (0: as soon as
    /// the kernel's reports at hand are applied; 10⁹ or more, or infinity: never).
    public let notificationBatchingInterval: TimeInterval
    /// The queue the handler runs on (nil: the main queue).
    public let operationQueue: OperationQueue?
    private let account: UbiquityAccount
    private let handler: @Sendable (MetadataQueryEvent) -> Void

    private enum Phase: Sendable { case idle, gathering, live, stopped }
    private struct State: @unchecked Sendable {
        // @unchecked: `held` is only used under the `Locked` mutex.
        var phase: Phase = .idle
        var control: QueryEngineControl?
        var run = 0
        var disabled = 0
        var results: [MetadataItem] = []
        var resultIndex: [UInt64: Int]?
        var held: [(output: QueryEngineOutput, run: Int)] = []
        var liveUpdateProblem: String?
        /// How long a deleted file's removal waits for its name to come back (tests change it).
        var removalHold: Duration = MetadataQuery.removalHold
    }
    private let state = Locked(State())
    /// The handler's calls, in order, on `operationQueue`.
    private let deliveries: OrderedDelivery

    /// A query of `scopes` for the items `predicate` accepts, sorted by `sortKeys`, whose events
    /// go to `handler` on `operationQueue` (the main queue when nil). Nothing happens until `start()`.
    public init(scopes: [MetadataQueryScope], predicate: MetadataItemPredicate = .all,
                sortKeys: [MetadataQuerySortKey] = [], notificationBatchingInterval: TimeInterval = 1.0,
                operationQueue: OperationQueue? = nil, account: UbiquityAccount = .shared,
                handler: @escaping @Sendable (MetadataQueryEvent) -> Void) {
        self.scopes = scopes
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.notificationBatchingInterval = max(0, notificationBatchingInterval)
        self.operationQueue = operationQueue
        deliveries = OrderedDelivery(queue: operationQueue ?? .main)
        self.account = account
        self.handler = handler
    }

    deinit {
        state.withLock { $0.control }?.send { $0.stop = true }
    }

    /// Starts gathering, then live updates. Returns at once; the events follow on the queue.
    /// A stopped query may be started again (it gathers afresh).
    ///
    /// - Throws: `MetadataQueryError.alreadyStarted` when running, `.cannotWatch` when the
    ///   system refuses an `inotify` instance (then nothing was started).
    public func start() throws(MetadataQueryError) {
        let roots = ScopeRoot.resolve(scopes, account: account)
        let control = QueryEngineControl()
        let run: Int? = state.withLock { state in
            guard state.phase == .idle || state.phase == .stopped else { return nil }
            state.phase = .gathering
            state.run += 1
            state.control = control
            state.results = []
            state.resultIndex = nil
            state.held = []
            state.liveUpdateProblem = nil
            return state.run
        }
        guard let run else { throw .alreadyStarted }
        let removalHold = state.withLock { $0.removalHold }
        let settings = QueryEngineSettings(
            roots: roots, agentStatus: AgentStatusSource.sources(for: roots, account: account), predicate: predicate, sortKeys: sortKeys,
            // Over 10⁹ s (about 32 years) is "never": whole nanoseconds in Int64 end near 292 years,
            // and an infinite interval must not trap.
            batchingInterval: .nanoseconds(Int64(min(notificationBatchingInterval, 1e9) * 1_000_000_000)),
            removalHold: removalHold,
            canDeliver: { [weak self] in self?.state.withLock { $0.disabled == 0 } ?? false },
            output: { [weak self] output in self?.enqueue(output, run: run) },
            problem: { [weak self] problem in self?.state.withLock { $0.liveUpdateProblem = problem } })
        if let failure = QueryEngine.start(settings, control: control) {
            state.withLock { $0.phase = .stopped; $0.control = nil }
            throw .cannotWatch(reason: failure)
        }
    }

    /// Stops gathering and live updates; the results stay as they are. No event is delivered
    /// after `stop()` returns, except one whose handler call had already begun. Any thread.
    public func stop() {
        let control = state.withLock { state -> QueryEngineControl? in
            guard state.phase == .gathering || state.phase == .live else { return nil }
            state.phase = .stopped
            state.held = []
            defer { state.control = nil }
            return state.control
        }
        control?.send { $0.stop = true }
    }

    /// Whether `start()` was called and `stop()` was not since.
    public var isStarted: Bool { state.withLock { $0.phase == .gathering || $0.phase == .live } }
    /// Whether the initial results are being gathered (until `didFinishGathering` is handled).
    public var isGathering: Bool { state.withLock { $0.phase == .gathering } }
    /// Whether the query was stopped.
    public var isStopped: Bool { state.withLock { $0.phase == .stopped } }

    /// Holds back updates (and keeps `results` as they are) until a matching `enableUpdates()`;
    /// calls nest. Changes made meanwhile are delivered when updates are enabled again.
    public func disableUpdates() {
        state.withLock { $0.disabled += 1 }
    }

    /// Ends one `disableUpdates()`; the last one delivers what was held back.
    public func enableUpdates() {
        let (release, control): (Int?, QueryEngineControl?) = state.withLock { state in
            guard state.disabled > 0 else { return (nil, nil) }
            state.disabled -= 1
            guard state.disabled == 0 else { return (nil, nil) }
            return (state.held.isEmpty ? nil : state.run, state.control)
        }
        // The held updates stay in `held`, ahead of any delivery queued meanwhile: whichever
        // delivery runs next hands them to the handler first (this one, if none is queued).
        if let release { enqueue(nil, run: release) }
        control?.send { $0.flush = true }
    }

    /// The results as of the last event handled, in the query's order.
    public var results: [MetadataItem] { state.withLock { $0.results } }
    /// How many results there are (`results.count`).
    public var resultCount: Int { state.withLock { $0.results.count } }

    /// The result at `index`, or nil when out of range (Apple's `result(at:)` raises instead).
    public func result(at index: Int) -> MetadataItem? {
        state.withLock { $0.results.indices.contains(index) ? $0.results[index] : nil }
    }

    /// The index of the result whose identifier is `id`, or nil.
    public func index(ofResultWithID id: UInt64) -> Int? {
        state.withLock { state in
            if state.resultIndex == nil {
                var index: [UInt64: Int] = [:]
                index.reserveCapacity(state.results.count)
                for (position, item) in state.results.enumerated() { index[item.id] = position }
                state.resultIndex = index
            }
            return state.resultIndex?[id]
        }
    }

    /// Why live updates are incomplete (a folder could not be watched, usually because of the
    /// per-user `inotify` watch limit), or nil when every folder is watched.
    public var liveUpdateProblem: String? { state.withLock { $0.liveUpdateProblem } }

    // MARK: Delivery

    /// Queues the delivery of `output` of the run `run` (from the engine's thread; nil from
    /// `enableUpdates()`, to deliver the held updates), after every delivery queued before it.
    /// Outputs of an earlier run are dropped when their turn comes.
    private func enqueue(_ output: QueryEngineOutput?, run: Int) {
        deliveries.submit { [weak self] in self?.deliver(output, run: run) }
    }

    /// On the operation queue: publishes the results of `output` and calls the handler — after
    /// the updates held back while updates were disabled, which are older (nil: only those).
    private func deliver(_ output: QueryEngineOutput?, run: Int) {
        let outputs: [QueryEngineOutput] = state.withLock { state in
            guard state.run == run, state.phase == .gathering || state.phase == .live else { return [] }
            if state.disabled > 0 {
                guard let output else { return [] }
                if case .didUpdate = output.event {
                    state.held.append((output, run))
                    return []
                }
                return [output]
            }
            defer { state.held = [] }
            return state.held.filter { $0.run == run }.map(\.output) + (output.map { [$0] } ?? [])
        }
        for output in outputs {
            let deliverNow: Bool = state.withLock { state in
                guard state.run == run, state.phase == .gathering || state.phase == .live else { return false }
                state.results = output.results
                state.resultIndex = nil
                if output.event == .didFinishGathering { state.phase = .live }
                return true
            }
            if deliverNow { handler(output.event) }
        }
    }

    /// How long a deleted file's removal (and a rename's first half read without its second)
    /// waits before it is reported: a sync tool replaces a file by deleting it and renaming its
    /// temporary file into place, and the name coming back within this time is a change. The
    /// presenters' change monitor waits as long before it reports a deletion.
    static let removalHold: Duration = .milliseconds(200)

    /// Tests: sets how long removals are held (``removalHold``) by the next `start()`.
    func setRemovalHoldForTesting(_ hold: Duration) {
        state.withLock { $0.removalHold = hold }
    }

    /// Tests: the deliveries waiting for their turn on the operation queue.
    var waitingDeliveriesForTesting: Int { deliveries.waitingCount }

    /// Tests: makes the query's thread keep the second halves of renames it reads aside, as if the
    /// kernel had queued them late (true), or apply them as they come again (false).
    func setAsideSecondHalvesOfRenamesForTesting(_ setAside: Bool) {
        state.withLock { $0.control }?.send { $0.setsAsideMovedTo = setAside }
    }

    /// Tests: makes the query's thread apply the second halves of renames it set aside.
    func applySecondHalvesOfRenamesForTesting() {
        state.withLock { $0.control }?.send { $0.applyAsideMovedTo = true }
    }

    /// Tests: holds the query's thread until the returned semaphore is signalled. Returns once the
    /// thread holds (so every delivery it made before is on the operation queue); nil when the
    /// query is not running.
    func holdForTesting() -> DispatchSemaphore? {
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        guard let control = state.withLock({ $0.control }) else { return nil }
        control.send { $0.hold = (entered, release) }
        guard entered.wait(timeout: .now() + 60) == .success else { return nil }
        return release
    }

    /// Tests: makes the query's thread act as on `IN_Q_OVERFLOW` (drop what the kernel queued,
    /// walk again, report the differences).
    func simulateOverflowForTesting() {
        state.withLock { $0.control }?.send { $0.overflow = true }
    }
}

/// Why a metadata query could not start.
public enum MetadataQueryError: Error, Sendable, Hashable, LocalizedError {
    /// `start()` was called on a running query.
    case alreadyStarted
    /// The system refused the resources live updates need.
    case cannotWatch(reason: String)

    public var errorDescription: String? {
        switch self {
        case .alreadyStarted: "The metadata query is already running; stop it before starting it again."
        case .cannotWatch(let reason): "The metadata query cannot watch for changes: \(reason)."
        }
    }
}
