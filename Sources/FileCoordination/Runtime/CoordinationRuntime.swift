import Foundation

/// Everything a set of coordinators shares: the presenter registry and the delivery that messages
/// them, the change monitor, the lock table and lock directory, the move log, the package
/// extensions, the canonical-path caches, the lock borrowing tables and the per-presenter lock
/// owners.
///
/// The public API uses ``process``, the process default: `Coordinator(filePresenter:)`, the static
/// `Coordinator.addFilePresenter(_:)` and `registerPackageExtension(_:)` all reach it. Tests (and
/// layers built on this one) can make their own runtime — for example with its own lock
/// directory — and create coordinators in it with `Coordinator(filePresenter:runtime:)`. Two
/// runtimes behave towards each other like two processes: they share locks only through the lock
/// directory (one with the same directory excludes the other's writers, one with another
/// directory sees none of its locks), and presenters registered in one are never messaged by the
/// other's coordinators.
///
/// Everything a coordination needs reaches its runtime explicitly: internal functions take the
/// runtime (or the part of it they use) as an argument, never a `= CoordinationRuntime.process`
/// default; only the public API (`Coordinator(filePresenter:)`, the static presenter and package
/// calls, `CloudDocument(fileURL:)`) picks the process default, as Apple's shape wants.
///
/// ## State that stays process-wide, and why
/// This is the one list (Docs/Architecture.md has the same as a table). Everything else that
/// lives longer than a call belongs to a runtime (or to a document, a query, a store). Constants
/// are not listed.
/// - The kernel makes it the process's:
///   - `KernelWaitInterrupter.shared` — signal dispositions and the threads a signal interrupts
///     belong to the process (one interrupter thread);
///   - `IdleDescriptors.shared`, `VerifiedDescriptors.shared` — descriptor numbers are per
///     process, and a number closed through one runtime may be reused by another at once;
///   - `ColumnAllocator.shared` — a group cell's column must be unique among all live holders of
///     the process, whatever runtime they belong to, since they share the kernel's lock table;
///   - `ReclaimEpoch.mapped`, `PresenceTable.mapped` — mappings of a shared file, keyed by its
///     path: one mapping per file and process, shared by every runtime using that lock directory;
///   - `ReclaimScheduler.schedulers` — one reclaiming thread per lock directory and process;
///   - `RemotePresence.releasedAtExit` / `exitHandlerInstalled` — one `atexit` handler per
///     process gives back every runtime's presence slot;
///   - `MainQueueCheck` (SystemSupport) — the main queue is the process's.
/// - The thread makes it so: `AccessorFrames.frames` is thread-local (what this thread holds and
///   runs, for deadlock detection — `ThreadClaims` is a view of it — and joining, whatever the runtime),
///   and therefore `LockOwner.nextID`: `ThreadClaims` compares owners of every runtime a thread
///   coordinates in, so an owner's id must be unique in the process.
/// - The process's own identity and output: `CoordinationRuntime.process` (the default runtime
///   itself); `LockDirectory.resolvedOnce` (the process default's lock directory, from
///   `CLOUDDOCUMENTS_LOCK_DIR`, resolved once: every coordination of the process must use the
///   same directory, or locks would split; other runtimes are given theirs); `PresenterID.thisProcess`;
///   `SyncConflictNamingOptions.local` in CloudDocuments (this machine's host name, looked up once
///   so the version queries and the change monitor always agree); `RemoteLog` and `FileVersion.setterFailures`
///   (counters of what the process wrote on its standard error, for tests);
///   `EndpointStatistics.turns` (every endpoint's poll turns, for tests).
/// - What the layers above register once for the whole process: `CoordinationRuntime.syncToolPolicy`
///   (``register(syncToolPolicy:)``; CloudDocuments registers the sync tools' naming rules, which
///   describe the files on disk, not a runtime, so every runtime's change monitor and messenger
///   read names alike).
/// - Thread pools and queues that hold no state, only an order of work: `WaitingThreads.coordinations`
///   (the waiting threads of async coordinations), `CloudDocument.conflictChecks` /
///   `conflictCheckWork` (one check of the version store at a time in the process), and the
///   change monitor's `ChangeMonitor.promotions` / `deletionChecks` queues (which could become
///   per-monitor; left as they are while the change monitor is reworked).
/// - The disk, not a runtime, is what they describe: `StrayTemporaryFiles.scans` (when each folder
///   was last scanned for a killed save's leftovers: a rate limit on disk work, keyed by folder).
/// - Test hooks keyed by path or installed for one test: `SaveFailureInjection`,
///   `TemporaryItemLock` creation hooks, `VersionStoreTesting.pauseHook`,
///   `DurableTreeCopy.afterFirstChunk`.
/// - Apple's singletons, whose shape is process-wide: `UbiquityAccount.shared` (which reads the
///   environment at each use, not once), `KeyValueStore.default`, and in FoundationCompatibility
///   `PresenterBridge.table` (one bridge per `NSFilePresenter` object, as
///   `NSFileCoordinator.addFilePresenter` is a class method), `NSUbiquitousKeyValueStore.shared`,
///   the identity observation behind `FileManager.ubiquityIdentityToken` and the
///   security-scoped access counts.
package final class CoordinationRuntime: Sendable {
    /// The process default, used by the public API.
    package static let process = CoordinationRuntime(directory: .fromEnvironment)

    let registry: PresenterRegistry
    let delivery: InProcessDelivery
    let changeMonitor: ChangeMonitor
    let lockTable: LockTable
    let moveLog: MoveLog
    let packageExtensions: PackageExtensions
    let paths: PathCaches
    let lending: LockLending
    let borrowing: PresenterBorrowing
    let presenterLockOwners: PresenterLockOwners
    /// Presenters in other processes: publishing ours, finding theirs (Remote/, Docs/RemotePresenters.md).
    let remote: RemotePresence
    /// What the messenger sends through: this runtime's presenters in process, others' remotely.
    let messengerDelivery: RoutingDelivery
    private let directory: DirectorySource

    private enum DirectorySource: Sendable {
        /// Resolved once per process, at the first coordination (`LockDirectory.current()`).
        case fromEnvironment
        /// Given explicitly, validated when the runtime was made.
        case given(Result<LockDirectory, CoordinationError>)
    }

    /// A runtime of its own, whose lock files live in `lockDirectoryPath` (created with mode
    /// 0700 if missing, validated like `CLOUDDOCUMENTS_LOCK_DIR`; if it is unusable, every
    /// coordination of this runtime throws ``CoordinationError/lockDirectoryUnusable(path:reason:)``).
    package convenience init(lockDirectoryPath: String) {
        self.init(directory: .given(Result { () throws(CoordinationError) in try LockDirectory.validate(lockDirectoryPath) }))
    }

    /// A runtime of its own that uses the process's lock directory (so it coordinates with every
    /// other runtime and process), with its own presenters, move log and package extensions.
    package convenience init() {
        self.init(directory: .fromEnvironment)
    }

    private init(directory: DirectorySource) {
        self.directory = directory
        paths = PathCaches()
        changeMonitor = ChangeMonitor()
        let isProcessDefault: Bool
        if case .fromEnvironment = directory { isProcessDefault = true } else { isProcessDefault = false }
        remote = RemotePresence(enabled: isProcessDefault && RemotePresence.enabledByEnvironment,
                                directoryPath: { [directory] in  // remote presenters hook
            switch directory {
            case .fromEnvironment: return try? LockDirectory.current().path
            case .given(let result): return try? result.get().path
            }
        })
        registry = PresenterRegistry(monitor: changeMonitor, paths: paths, presence: remote)
        lending = LockLending()
        borrowing = PresenterBorrowing(lending: lending)
        delivery = InProcessDelivery(registry: registry, borrowing: borrowing)
        messengerDelivery = RoutingDelivery(local: delivery, remote: remote.delivery)
        lockTable = LockTable()
        remote.attach(registry: registry, delivery: delivery)
        moveLog = MoveLog()
        packageExtensions = PackageExtensions()
        presenterLockOwners = PresenterLockOwners(lockTable: lockTable)
        changeMonitor.attach(runtime: self)
    }

    // MARK: Sync tools (the whole process's)

    /// The policy registered with ``register(syncToolPolicy:)``; ``NoSyncToolPolicy`` until then.
    /// A leaf lock, held only to copy the value in or out: the monitor reads it with its own state
    /// locked, and nothing is ever taken while it is held.
    private static let registeredSyncToolPolicy = Locked<any SyncToolPolicy>(NoSyncToolPolicy())

    /// What every runtime's change monitor and presenter messenger ask about sync tools' names
    /// (temporary items, conflict copies, rclone bisync's promotion): the policy registered with
    /// ``register(syncToolPolicy:)``, or ``NoSyncToolPolicy`` when none was (every name is then an
    /// ordinary item; see ``SyncToolPolicy``). Any thread.
    package static var syncToolPolicy: any SyncToolPolicy {
        registeredSyncToolPolicy.withLock { $0 }
    }

    /// Makes `policy` what every runtime of the process asks about sync tools' names, from now on
    /// (names the monitor saw before were judged by the policy then registered). A layer registers
    /// its policy before it presents or coordinates anything — CloudDocuments does so when a
    /// `CloudDocument` is made, a `FileVersion` call is made or Ubiquity moves an item
    /// (`SyncToolRules.registerWithCoordination()`) — and registers the same one each time, so the
    /// order in which parts of a process start does not matter. Any thread.
    package static func register(syncToolPolicy policy: any SyncToolPolicy) {
        registeredSyncToolPolicy.withLock { $0 = policy }
    }

    // MARK: Presenters and packages of this runtime (what `Coordinator`'s static API does for `process`)

    /// Registers `presenter` with this runtime's coordinators (held weakly).
    package func addFilePresenter(_ presenter: any FilePresenter) { registry.add(presenter) }

    /// Unregisters `presenter`; removing one that is not registered does nothing.
    package func removeFilePresenter(_ presenter: any FilePresenter) { registry.remove(presenter) }

    /// Every presenter registered with this runtime and still alive.
    package var filePresenters: [any FilePresenter] { registry.all }

    /// True while a coordinator of this runtime that holds locks waits for `presenter`'s answer
    /// and lends it those locks (`PresenterBorrowing`): a coordination the presenter makes now
    /// joins them. A presenter that answers by coordinating must then not queue that coordination
    /// behind one of its own that may wait for those very locks (CloudDocument runs such a save
    /// at once, on a thread of its own).
    package func isLendingLocks(to presenter: any FilePresenter) -> Bool {
        borrowing.owner(for: presenter) != nil
    }

    /// A registered presenter of this runtime says whether it has unsaved changes now: while
    /// none of the runtime's presenters has any, other processes skip asking this one to save
    /// (RemotePresence+Clean). Call it in the same critical section that changes the presenter's
    /// own record of unsaved changes, so the two never disagree for an asker; any thread. A
    /// presenter that never calls it counts as possibly having unsaved changes.
    package func presenter(_ presenter: any FilePresenter, hasUnsavedChanges: Bool) {
        remote.report(PresenterID(presenter), hasUnsavedChanges: hasUnsavedChanges)
    }

    /// Declares directories with this extension to be packages for this runtime's coordinators.
    package func registerPackageExtension(_ pathExtension: String) { packageExtensions.register(pathExtension) }

    /// Stops treating directories with this extension as packages in this runtime.
    package func unregisterPackageExtension(_ pathExtension: String) { packageExtensions.unregister(pathExtension) }

    /// The lock directory of this runtime; throws when it is unusable.
    @inline(__always)
    func lockDirectory() throws(CoordinationError) -> LockDirectory {
        switch directory {
        case .fromEnvironment: return try LockDirectory.current()
        case .given(let result): return try result.get()
        }
    }
}
