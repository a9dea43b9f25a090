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
/// Some state stays process-wide on purpose, because the kernel makes it so:
/// - `KernelWaitInterrupter` — signal handlers and the threads they interrupt belong to the process;
/// - `IdleDescriptors` / `VerifiedDescriptors` — descriptor numbers are per process, and a number
///   closed through one runtime may be reused by another at once;
/// - `ColumnAllocator` — a group cell's column must be unique among all live holders of the process,
///   whatever runtime they belong to, since they share the kernel's lock table;
/// - `ReclaimEpoch` mappings and `ReclaimScheduler`s — one per lock directory *file*, shared by every
///   runtime of the process that uses that directory (one reclaiming thread per directory);
/// - `ThreadClaims` — what the current thread holds, for deadlock detection, whatever the runtime.
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

    // MARK: Presenters and packages of this runtime (what `Coordinator`'s static API does for `process`)

    /// Registers `presenter` with this runtime's coordinators (held weakly).
    package func addFilePresenter(_ presenter: any FilePresenter) { registry.add(presenter) }

    /// Unregisters `presenter`; removing one that is not registered does nothing.
    package func removeFilePresenter(_ presenter: any FilePresenter) { registry.remove(presenter) }

    /// Every presenter registered with this runtime and still alive.
    package var filePresenters: [any FilePresenter] { registry.all }

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
