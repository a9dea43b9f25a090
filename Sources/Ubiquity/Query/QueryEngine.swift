import Foundation
import Glibc
import FileCoordination
import SystemSupport

/// What the engine hands its query: an event, and the results as of that event.
struct QueryEngineOutput: Sendable {
    let event: MetadataQueryEvent
    let results: [MetadataItem]
}

/// The settings of one run of a query.
struct QueryEngineSettings: Sendable {
    var roots: [ScopeRoot]
    /// The containers under `roots` that the sync agent serves: their items' transfer states
    /// come from its status (``QueryEngine/startWatchingTransfers()``).
    var agentStatus: [AgentStatusSource] = []
    var predicate: MetadataItemPredicate
    var sortKeys: [MetadataQuerySortKey]
    var batchingInterval: Duration
    /// How long a deleted file's removal, and a rename's first half, wait for what makes them a
    /// change (``HeldRemovals``).
    var removalHold: Duration
    /// Whether updates may be delivered now (false while `disableUpdates()` is in effect).
    var canDeliver: @Sendable () -> Bool
    /// Receives the events, on the engine's thread, in order.
    var output: @Sendable (QueryEngineOutput) -> Void
    /// Receives a problem that makes live updates incomplete (a folder that cannot be watched).
    var problem: @Sendable (String) -> Void
}

/// One running query on its own ``InotifyLoop`` (thread `Ubiquity.MetadataQuery`): walks the
/// scopes (gathering, when the loop starts), then sleeps in the loop's `poll` — on its `inotify`
/// descriptor, its wake channel (``QueryEngineControl``'s commands) and the next deadline (a hold
/// ending, a batch falling due) — applies the kernel's reports to the results, and delivers batches
/// of changes. Made on the loop's thread, by the loop, and everything here belongs to that thread
/// alone (asserted with `loop.assertInLoop()` where the loop calls in).
final class QueryEngine: InotifyLoopClient {
    let settings: QueryEngineSettings
    let control: QueryEngineControl
    let loop: InotifyLoop
    var results: ResultSet
    var watches: WatchTable
    /// Removals waiting a moment for what makes them a change.
    var held = HeldRemovals()
    /// The names that may be conflict copies, per folder.
    var conflictCopies = ConflictCopyIndex()
    /// Tests: second halves of renames read and set aside, when `setsAsideMovedTo`.
    var asideMovedTo: [InotifyEvent] = []
    var setsAsideMovedTo = false
    /// When the oldest undelivered change was made.
    var pendingSince: ContinuousClock.Instant?
    let clock = ContinuousClock()
    /// Whether a report read since the last rescan was `IN_Q_OVERFLOW` (the rescan comes once the
    /// turn's reads are done).
    var overflowed = false
    /// The status folders' watch descriptors → indexes in `settings.agentStatus`.
    var statusWatches: [Int32: [Int]] = [:]
    /// The transfer states last read from each agent status (by index in `settings.agentStatus`).
    var transferStates: [Int: [String: ItemTransferState]] = [:]

    /// Starts the loop; nil when no `inotify` descriptor (or wake channel) can be had (then
    /// `reason` says why).
    static func start(_ settings: QueryEngineSettings, control: QueryEngineControl) -> String? {
        let loop: InotifyLoop
        do {
            loop = try InotifyLoop(name: "Ubiquity.MetadataQuery", maximumReadsPerTurn: maximumReads)
        } catch .inotify(let error) {
            return "inotify_init1 failed: \(error) (raise fs.inotify.max_user_instances)"
        } catch {
            return error.description
        }
        control.attach(loop)
        loop.start { loop in QueryEngine(settings: settings, control: control, loop: loop) }
        return nil
    }

    private init(settings: QueryEngineSettings, control: QueryEngineControl, loop: InotifyLoop) {
        self.settings = settings
        self.control = control
        self.loop = loop
        results = ResultSet(sortKeys: settings.sortKeys)
        watches = WatchTable(loop: loop)
    }

    // MARK: The loop's calls

    /// Gathering, before the loop's first wait.
    func inotifyLoopDidStart(_ loop: InotifyLoop) {
        loop.assertInLoop()
        settings.output(QueryEngineOutput(event: .didStartGathering, results: []))
        gather()
        if control.commands.withLock({ $0.stop }) { return }  // stopped: the loop ends at once
        startWatchingTransfers()
        _ = results.takeChanges()  // the transfer states read now are part of the gathered results
        reportWatchProblem()
        settings.output(QueryEngineOutput(event: .didFinishGathering, results: results.ordered))
    }

    /// The loop comes back when the pending changes are due or a hold ends (nil: neither, sleep
    /// until the kernel reports or a command comes).
    func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant? {
        var wake = held.nextDeadline()
        if let pendingSince, results.hasPendingChanges, settings.canDeliver() {
            let due = pendingSince + settings.batchingInterval
            wake = wake.map { min($0, due) } ?? due
        }
        return wake
    }

    /// Commands (``QueryEngineControl``), before the turn's reports are read.
    func inotifyLoopWasWoken(_ loop: InotifyLoop) {
        loop.assertInLoop()
        let commands = control.take()
        if commands.stop { return }  // the loop ends at its next check
        if let hold = commands.hold {
            hold.entered.signal()
            hold.release.wait()
        }
        if commands.overflow { recoverFromOverflow() }
        if let setsAside = commands.setsAsideMovedTo { setsAsideMovedTo = setsAside }
        if commands.applyAsideMovedTo { applyAsideMovedTo() }
    }

    /// One read's reports (at most ``maximumReads`` reads a turn).
    func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
        apply(events)
    }

    /// After the turn's reads: when a hold ended, what is queued is read first (what ends it may
    /// just have been queued); then the rescan an overflow asks for; then the holds that ended
    /// are reported; then a batch is delivered if it is due.
    func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {
        loop.assertInLoop()
        let holdEnded = held.nextDeadline().map { $0 <= clock.now } ?? false
        if readEvents || holdEnded { finishReading(readingQueued: !readEvents) }
        if holdEnded { endHolds() }
        deliverIfDue()
    }

    /// Notes that a change is pending (starting the batching interval).
    func notePending() {
        if pendingSince == nil, results.hasPendingChanges { pendingSince = clock.now }
    }

    private func deliverIfDue() {
        loop.assertInLoop()
        notePending()
        guard let pendingSince, settings.canDeliver() else { return }
        guard results.hasPendingChanges else { self.pendingSince = nil; return }
        guard clock.now >= pendingSince + settings.batchingInterval else { return }
        let update = results.takeChanges()
        self.pendingSince = nil
        settings.output(QueryEngineOutput(event: .didUpdate(update), results: results.ordered))
    }

    private var reportedProblem = false
    func reportWatchProblem() {
        if !reportedProblem, let failure = watches.failure {
            reportedProblem = true
            settings.problem(failure)
        }
    }

    /// The root whose tree holds `path`, if the path is in a scope (and not excluded).
    func root(containing path: String) -> ScopeRoot? {
        settings.roots.first { root in
            (path == root.path || CanonicalPathSupport.isInside(path, root.path)) && root.includes(folder: path)
        }
    }
}
