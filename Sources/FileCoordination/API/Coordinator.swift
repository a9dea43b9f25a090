import Foundation
import Synchronization

/// Coordinates reading and writing of files and directories with other coordinators — in this
/// process and in every other process of the same user — and with file presenters: Apple's
/// `NSFileCoordinator`, for Linux.
///
/// Create one coordinator per operation (optionally on behalf of a ``FilePresenter``, which is then
/// never told about this coordinator's own accesses), and run your file access inside one of the
/// `coordinate` calls. Readers share an item; a writer excludes readers and writers; access inside
/// a *package* counts as access to the whole package; a delete, move or replace of a directory
/// excludes everything inside it. The locks live in lock files (see Docs/Coordination.md) held with
/// open-file-description locks, so they work across processes and vanish with a killed process.
///
/// ## Errors
/// Every call throws ``CoordinationError`` when the accessor could not be run (cancelled, timed
/// out, would deadlock, a presenter refused, the lock directory is unusable) — then no lock is
/// held and the accessor did not run. An error thrown *by your accessor* is rethrown unchanged,
/// after the locks are released.
///
/// ## Threading
/// The synchronous calls block the calling thread while they wait and run the accessor on it.
/// Presenter messages are delivered on each presenter's `presentedItemOperationQueue`. A
/// coordinator may be used from any thread; ``cancel()`` may be called from any thread.
public final class Coordinator: Sendable {
    let filePresenter: (any FilePresenter)?
    /// Where this coordinator's presenters, locks and caches live (the process default unless
    /// made with `init(filePresenter:runtime:)`).
    let runtime: CoordinationRuntime
    let owner: LockOwner
    /// Whether this coordinator joined another one's access (``joiningCurrentAccess(to:)``): its
    /// owner is that access's, which this coordinator neither keeps nor hands on when it goes.
    let isJoined: Bool
    let cancellation = CancellationToken()
    /// The mutable settings, and the presenters prepared by a running
    /// `prepare(forReadingItemsAt:…)` batch (with a count of batches): this coordinator's own
    /// coordinations do not message those again.
    struct Settings {
        var purpose: String?
        var timeout: Duration?
        var batchPrepared: [PresenterID: Int] = [:]
    }
    let settings = Locked(Settings())

    /// Creates a coordinator, optionally acting for `filePresenter` (which is then not messaged
    /// about this coordinator's accesses, and whose own coordinations join this one's locks while
    /// it answers a save or deletion request). Coordinators created with the same presenter never block each other.
    public convenience init(filePresenter: (any FilePresenter)? = nil) {
        self.init(filePresenter: filePresenter, runtime: .process)
    }

    /// Creates a coordinator in `runtime` instead of the process default: it coordinates with
    /// other runtimes only through their shared lock directory, and messages only `runtime`'s
    /// presenters.
    package init(filePresenter: (any FilePresenter)? = nil, runtime: CoordinationRuntime) {
        self.filePresenter = filePresenter
        self.runtime = runtime
        self.owner = runtime.presenterLockOwners.owner(for: filePresenter)
        self.isJoined = false
    }

    /// A coordinator that joins the access of `frame` (see ``joiningCurrentAccess(to:)``).
    init(joining frame: AccessorFrames.Frame, timeout: Duration?) {
        filePresenter = frame.coordinator.filePresenter
        runtime = frame.coordinator.runtime
        owner = frame.owner
        isJoined = true
        self.timeout = timeout
    }

    deinit {
        // A joined coordinator's owner belongs to the access it joined.
        if isJoined { return }
        // A presenter's owner is shared by its coordinators and kept for the next one; any other
        // is handed on.
        if let filePresenter {
            runtime.presenterLockOwners.keep(owner, for: filePresenter)
        } else {
            runtime.presenterLockOwners.recycle(owner)
        }
    }

    /// Coordinators with the same purpose identifier never block each other, in this process or in
    /// others. Defaults to a string unique to this coordinator. Reading or setting it makes the
    /// coordinator use the (slightly slower) group protocol for the locks it takes afterwards,
    /// since the identifier may then be shared.
    ///
    /// Reading and setting are atomic together: the identifier returned and the one the locks use
    /// are always the same, even when several threads read and set it at once (the last write wins
    /// for both).
    public var purposeIdentifier: String {
        get {
            // Made on first use: most coordinators never need one, and a UUID costs a syscall.
            // The lock owner is switched inside the settings lock, so a concurrent setter cannot
            // leave the owner with a different purpose than the one stored (lock order: settings,
            // then the owner's state; the owner never takes the settings lock).
            settings.withLock { settings in
                let purpose: String
                if let existing = settings.purpose {
                    purpose = existing
                } else {
                    purpose = UUID().uuidString
                    settings.purpose = purpose
                }
                owner.setGroup(purpose)
                return purpose
            }
        }
        set {
            settings.withLock { settings in
                settings.purpose = newValue
                owner.setGroup(newValue)
            }
        }
    }

    /// The longest any single coordination call waits (for locks and for presenters' answers)
    /// before throwing ``CoordinationError/timedOut``. `nil` (the default) waits forever, like Apple's.
    public var timeout: Duration? {
        get {
            // Most coordinators never set one: then no lock is taken (every coordination reads this).
            guard hasTimeout.load(ordering: .acquiring) else { return nil }
            return settings.withLock { $0.timeout }
        }
        set {
            settings.withLock { settings in
                settings.timeout = newValue
                hasTimeout.store(newValue != nil, ordering: .releasing)
            }
        }
    }
    /// Whether `settings.timeout` is set (written under the settings lock, read without it).
    private let hasTimeout = Atomic<Bool>(false)

    /// Cancels this coordinator: waits in progress throw ``CoordinationError/cancelled`` at once,
    /// and later calls throw it without waiting. Messages already sent to presenters are not
    /// recalled. Safe to call from any thread, any number of times.
    public func cancel() {
        cancellation.cancel()
    }

    /// The owner whose locks this coordinator uses: its own, or — while its presenter answers a
    /// save or deletion request — the requester's.
    var effectiveOwner: LockOwner {
        if isJoined { return owner }
        if let filePresenter, let borrowed = runtime.borrowing.owner(for: filePresenter) { return borrowed }
        return owner
    }

    // MARK: Presenter registry

    /// Registers `presenter` with this process's coordinators (the default runtime). It is held
    /// weakly; remove it before it goes away. Register from inside a coordinated read so no
    /// change slips by unnoticed.
    public static func addFilePresenter(_ presenter: any FilePresenter) {
        CoordinationRuntime.process.addFilePresenter(presenter)
    }

    /// Unregisters `presenter`. Removing one that is not registered does nothing.
    public static func removeFilePresenter(_ presenter: any FilePresenter) {
        CoordinationRuntime.process.removeFilePresenter(presenter)
    }

    /// Every registered presenter still alive.
    public static var filePresenters: [any FilePresenter] {
        CoordinationRuntime.process.filePresenters
    }

    // MARK: Packages

    /// Declares directories with this extension (for example `"pages"` or `".bundle"`) to be
    /// packages: any access to an item inside one counts as access to the whole package. Applies to
    /// coordinations that start afterwards; every cooperating process must register it too.
    public static func registerPackageExtension(_ pathExtension: String) {
        CoordinationRuntime.process.registerPackageExtension(pathExtension)
    }

    /// Stops treating directories with this extension as packages.
    public static func unregisterPackageExtension(_ pathExtension: String) {
        CoordinationRuntime.process.unregisterPackageExtension(pathExtension)
    }

    /// The registered package extensions (lowercased, without the dot).
    public static var packageExtensions: Set<String> {
        CoordinationRuntime.process.packageExtensions.all
    }

    // MARK: Internal driver

    func perform<T>(_ intents: [FileAccessIntent], _ accessor: ([URL]) throws -> T) throws -> T {
        var access = try CoordinatedAccess.begin(intents, coordinator: self)
        let urls = access.urls
        let result = Result { try access.run { try accessor(urls) } }
        access.end()
        return try result.get()
    }
}
