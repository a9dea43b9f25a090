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

/// The thread of one running query: walks the scopes (gathering), then sleeps in `poll` on its
/// `inotify` descriptor and its control `eventfd`, applies the kernel's reports to the results,
/// and delivers batches of changes. Everything here belongs to that thread alone.
final class QueryEngine {
    let settings: QueryEngineSettings
    let control: QueryEngineControl
    let inotify: Int32
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

    /// Starts the thread; nil when no `inotify` descriptor can be had (then `reason` says why).
    static func start(_ settings: QueryEngineSettings, control: QueryEngineControl) -> String? {
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { return "inotify_init1 failed: \(Errno.current) (raise fs.inotify.max_user_instances)" }
        let thread = Thread {
            let engine = QueryEngine(settings: settings, control: control, inotify: inotify)
            engine.run()
        }
        thread.name = "Ubiquity.MetadataQuery"
        thread.start()
        return nil
    }

    private init(settings: QueryEngineSettings, control: QueryEngineControl, inotify: Int32) {
        self.settings = settings
        self.control = control
        self.inotify = inotify
        results = ResultSet(sortKeys: settings.sortKeys)
        watches = WatchTable(inotify: inotify)
    }

    private func run() {
        defer { close(inotify) }
        settings.output(QueryEngineOutput(event: .didStartGathering, results: []))
        gather()
        if control.commands.withLock({ $0.stop }) { return }
        reportWatchProblem()
        settings.output(QueryEngineOutput(event: .didFinishGathering, results: results.ordered))
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: control.wake, events: Int16(POLLIN), revents: 0)]
            let ready = retryingOnInterrupt { poll(&descriptors, 2, pollTimeout()) }
            if ready < 0 { return }
            if descriptors[1].revents != 0 {
                let commands = control.take()
                if commands.stop { return }
                if let hold = commands.hold {
                    hold.entered.signal()
                    hold.release.wait()
                }
                if commands.overflow { recoverFromOverflow() }
                if let setsAside = commands.setsAsideMovedTo { setsAsideMovedTo = setsAside }
                if commands.applyAsideMovedTo { applyAsideMovedTo() }
            }
            let holdEnded = held.nextDeadline().map { $0 <= clock.now } ?? false
            // Read before ending a hold: what ends it may just have been queued.
            if descriptors[0].revents != 0 || holdEnded { readEvents(into: buffer) }
            if holdEnded { endHolds() }
            deliverIfDue()
        }
    }

    /// Milliseconds until the pending changes are due or a hold ends (-1: neither, sleep until woken).
    private func pollTimeout() -> Int32 {
        var wake = held.nextDeadline()
        if let pendingSince, results.hasPendingChanges, settings.canDeliver() {
            let due = pendingSince + settings.batchingInterval
            wake = wake.map { min($0, due) } ?? due
        }
        guard let wake else { return -1 }
        let remaining = wake - clock.now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int32(min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
    }

    /// Notes that a change is pending (starting the batching interval).
    func notePending() {
        if pendingSince == nil, results.hasPendingChanges { pendingSince = clock.now }
    }

    private func deliverIfDue() {
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
