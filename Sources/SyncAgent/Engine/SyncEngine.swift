import FileCoordination
import Foundation

/// Syncs one container folder with a ``RemoteStore``, both ways, taking part in file
/// coordination: uploads read through coordinated reads (an open document with unsaved changes
/// saves first), downloads land through coordinated writes from a complete temporary file (open
/// documents reload), concurrent edits become conflict versions on both devices.
///
/// A **pass** (``syncOnce()``) scans the container (`lstat` against the journal), lists the server,
/// plans (``SyncPlanner``), runs the steps and records each in the crash-safe ``SyncJournal``.
/// ``run()`` repeats passes every ``SyncEngineConfiguration/pollInterval`` (at once after
/// ``syncNow()``), backing off with jitter while the server fails; offline, local changes stay
/// queued (they are simply found again by the next pass).
///
/// Status: every change of ``status`` is given to the `onStatus` callback passed to the
/// initializer, on whatever thread made it (the engine's or a transfer's progress callback);
/// keep it short and non-blocking.
///
/// Threading: an actor. Blocking local work (coordinated accesses, which wait for presenters)
/// runs on a global dispatch queue, never on a cooperative-pool thread.
public actor SyncEngine {
    public nonisolated let configuration: SyncEngineConfiguration
    let store: any RemoteStore
    let journal: SyncJournal
    let planner: SyncPlanner
    let statusBox: SyncStatusBox
    let local: LocalCoordination

    var isPaused = false
    /// Whether a pass is under way (passes never overlap).
    var isPassRunning = false
    var approvedDeletions: Set<String> = []
    var approvedEmptyRoot = false
    /// The paths last held, approved by ``approveHeldDeletions(setIDs:)``.
    var lastHeld: [String] = []
    /// Unapproved deletions carried out by recent passes (the mass-deletion guard's burst window).
    var deletionBurst = DeletionBurst()
    var lastRefusalWasEmptyRoot = false
    var consecutiveFailures = 0
    /// The version store's recorded item paths, read once per pass (``syncOnce()`` clears it).
    var recordedVersionPaths: Set<String>?
    /// The last full listing, reused while the root's tag is unchanged on servers whose folder
    /// tags change with anything below them.
    var cachedListing: RemoteListing?
    /// Local items already reported as not synced (links, names that are not UTF-8).
    var reportedSkips = Set<String>()
    /// What the change watcher marked (set while ``run()`` runs with a watcher; `nil`: every
    /// pass scans the whole container).
    var changeLog: LocalChangeLog?
    /// The container as the last scan left it (see ``LocalScanState``).
    var localState = LocalScanState()
    /// Which folders are package documents (``SyncEngineConfiguration/packageExtensions``).
    let packageRules: PackageRules
    /// This pass's packages, folded into one item each (see ``PackageView``).
    var packageView = PackageView()
    /// The conflict-area paths of conflicts journalled by this pass's steps.
    var conflictsBegunThisPass = Set<String>()
    /// The identifier of the set of deletions last held (``HeldDeletion/setID``).
    var lastHeldSetID: String?
    /// Evicted items asked for and pinned items, saved in the journal folder (``OnDemandState``).
    var onDemand: OnDemandState
    /// The identifiers of the requests waiting for each requested download (answered in the
    /// status when it fails; not saved: a reader waits no longer than the agent runs).
    var downloadWaiters: [String: [String]] = [:]
    /// The identifiers answered in the status's ``ContainerSyncStatus/refusedRequests``, oldest first.
    var refusalOrder: [String] = []
    /// The server tag each evicted item's placeholder was last checked against.
    var checkedEvictedTags: [String: String] = [:]
    /// The evicted items the last pass found, with what they were found from (``EvictedItems/Memo``).
    var evictedMemo: EvictedItems.Memo?
    private var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
    private var waiterCounter: UInt64 = 0
    private var wakeRequested = false

    /// An engine for the container of `configuration`, talking to `store`.
    /// - Throws: ``JournalError`` when the journal cannot be opened (then nothing is synced).
    public init(configuration: SyncEngineConfiguration, store: any RemoteStore,
                onStatus: @escaping @Sendable (ContainerSyncStatus) -> Void = { _ in }) throws(JournalError) {
        self.configuration = configuration
        self.store = store
        journal = try SyncJournal(folder: configuration.journalFolder)
        onDemand = OnDemandState.load(from: configuration.journalFolder)
        planner = SyncPlanner(guards: configuration.guards)
        packageRules = PackageRules(configuration.packageExtensions)
        local = LocalCoordination(container: configuration.containerURL, timeout: configuration.coordinationTimeout)
        var initial = ContainerSyncStatus(identifier: configuration.identifier, server: store.displayName, state: .idle)
        initial.conflicted = Set(journal.conflicts.values.map(\.itemPath)).sorted()
        statusBox = SyncStatusBox(initial, publish: onStatus)
        Self.removeStaleTransfers(configuration)
        let knowsItems = !journal.entries.isEmpty, knowsServer = journal.server.rootFileID != nil
        let neverSynced = !knowsItems && !knowsServer
        Self.makeContainerFolderForFirstSync(configuration, journalIsEmpty: neverSynced)
    }

    /// The current status.
    public var status: ContainerSyncStatus { statusBox.current }

    // MARK: Control

    /// Stops running passes (a pass under way finishes its current step first).
    public func pause() {
        isPaused = true
        statusBox.update { $0.state = .paused }
    }

    /// Runs passes again, starting one now.
    public func resume() {
        isPaused = false
        statusBox.update { $0.state = .idle }
        wake()
    }

    /// Starts a pass now instead of at the next poll (``run()`` only).
    public func syncNow() { wake() }

    /// Lets the deletions held by the last pass (and an emptied container refused by it) go
    /// ahead in the next pass, which starts now. Deletions held later need a new approval.
    /// With `setIDs` (the ``HeldDeletion/setID``s the user was shown), the held deletions are
    /// approved only when they are still that set; otherwise nothing is approved and the status
    /// says to look again.
    public func approveHeldDeletions(setIDs: [String]? = nil) {
        if let setIDs, !lastHeld.isEmpty, !setIDs.contains(lastHeldSetID ?? "") {
            statusBox.record("the held deletions changed since they were shown: look at `clouddocs agent status` "
                + "and approve again", path: nil)
            wake()
            return
        }
        approvedDeletions.formUnion(lastHeld)
        if lastRefusalWasEmptyRoot { approvedEmptyRoot = true }
        wake()
    }

    // MARK: Running

    /// Runs passes until the calling task is cancelled: one pass, then a wait of the poll
    /// interval (or the back-off after a transient server error), cut short by ``syncNow()``,
    /// ``resume()``, ``approveHeldDeletions(setIDs:)`` or a change in the container (inotify; when no
    /// watch can be set up, polls alone find local changes).
    public func run() async {
        let log = LocalChangeLog()
        let watcher = try? LocalChangeWatcher(root: configuration.containerURL, log: log) { [weak self] in
            Task { await self?.syncNow() }
        }
        if watcher != nil { changeLog = log }
        defer {
            watcher?.stop()
            changeLog = nil
        }
        while !Task.isCancelled {
            var delay = configuration.pollInterval
            if !isPaused {
                let report = await syncOnce()
                if report.wentOffline {
                    consecutiveFailures += 1
                    delay = backoff(afterFailures: consecutiveFailures)
                    let retryAt = Date().addingTimeInterval(Double(delay.components.seconds))
                    statusBox.update { status in
                        if case .offline(let reason, _) = status.state { status.state = .offline(reason: reason, retryAt: retryAt) }
                    }
                } else {
                    consecutiveFailures = 0
                    // Safe mode deferred a step until a tag turns strong or a write is old
                    // enough: look again soon rather than a whole poll interval later.
                    if report.failed.contains(where: { if case .deferred = $0.error { true } else { false } }) {
                        delay = min(delay, Self.deferredRetry)
                    }
                }
            }
            await wait(for: isPaused ? .seconds(3600) : delay)
        }
    }

    /// The identifier of a set of held deletions: a hash of the sorted paths and their kinds.
    static func heldSetID(fromServer: [String], madeHere: [String]) -> String? {
        guard !fromServer.isEmpty || !madeHere.isEmpty else { return nil }
        var hasher = PackageFingerprint.FNV1a()
        for path in fromServer.sorted() { hasher.add("S" + path) }
        for path in madeHere.sorted() { hasher.add("L" + path) }
        return String(hasher.value, radix: 16)
    }

    /// How soon a pass follows one that deferred a step (safe mode).
    static let deferredRetry: Duration = .milliseconds(500)

    /// The back-off after `failures` transient failures in a row: the initial back-off doubled
    /// per failure up to the maximum, times a random factor in 0.5…1 (so many agents do not retry
    /// in step).
    func backoff(afterFailures failures: Int) -> Duration {
        let doublings = min(failures - 1, 20)
        let base = configuration.initialBackoff * (1 << max(0, doublings))
        let capped = min(base, configuration.maximumBackoff)
        return capped * Double.random(in: 0.5...1.0)
    }

    private func wake() {
        if let waiter {
            self.waiter = nil
            waiter.continuation.resume()
        } else {
            wakeRequested = true
        }
    }

    private func wakeWaiter(_ id: UInt64) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        waiter.continuation.resume()
    }

    /// Waits for `duration`, a wake-up, or the task's cancellation, whichever comes first.
    private func wait(for duration: Duration) async {
        if wakeRequested { wakeRequested = false; return }
        waiterCounter += 1
        let id = waiterCounter
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter = (id, continuation)
                Task { [weak self] in
                    try? await Task.sleep(for: duration)
                    await self?.wakeWaiter(id)
                }
            }
        } onCancel: {
            Task { [weak self] in await self?.wakeWaiter(id) }
        }
    }

    /// Removes this container's transfer files left by a killed agent (never a file under a real
    /// name: downloads are renamed into place only when complete), and makes its transfer folder.
    private static func removeStaleTransfers(_ configuration: SyncEngineConfiguration) {
        let folder = configuration.transfersFolder
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
    }

    /// A new transfer file's URL (`transfers/IDENTIFIER/UUID.KIND`).
    func transferFile(_ kind: String) -> URL {
        configuration.transfersFolder.appending(path: "\(UUID().uuidString).\(kind)")
    }
}

/// The threads of the engines' blocking work (``offThePool(_:)``).
let syncWorkThreads = WaitingThreads(name: "SyncAgent.work")

/// Runs `body` on a thread of its own (blocking work: coordinated accesses wait for presenters)
/// and returns its result to the calling task. Not a global dispatch queue: there a job waits
/// behind blocked threads until libdispatch adds one, and a process whose other work blocks
/// those threads (an app, the test runner) could starve the engine for a long time.
///
/// The result travels through a `Locked` box, not the continuation: when the body ends before the
/// task has finished suspending, the runtime hands the value over with atomics that
/// ThreadSanitizer does not see, and reported the result's fields (written on the work thread)
/// as a race with their reads in the task. The box's mutex makes the order visible to it.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws(SyncStepError) -> T) async throws(SyncStepError) -> T {
    let box = Locked<Result<T, SyncStepError>?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        syncWorkThreads.run {
            let result = Result { () throws(SyncStepError) -> T in try body() }
            box.withLock { $0 = result }
            continuation.resume()
        }
    }
    // Set before the resume, so never nil here.
    guard let result = box.withLock({ $0 }) else { throw .local(path: "", reason: "a work thread ended without a result") }
    return try result.get()
}
