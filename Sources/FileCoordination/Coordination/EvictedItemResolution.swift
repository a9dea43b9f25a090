import Foundation
import Glibc
import Synchronization

/// Files on demand, the coordinator's side: a coordinated access to an item that was *evicted*
/// (its bytes are only on the server; a placeholder stands beside its name) first brings it back,
/// then takes its locks and runs the accessor on the real file — as a coordinated read of an
/// evicted iCloud document downloads it on Apple platforms.
///
/// FileCoordination knows nothing of servers or agents: a higher layer (the Ubiquity module's
/// `FilesOnDemand`) registers an ``EvictedItemResolver`` for the folders whose items can be
/// evicted. Without one registered — the default, and always in the sync agent's own process —
/// this costs one atomic load per coordination. With one, an access to a path inside a registered
/// folder costs a byte comparison and one `lstat` more; only when that item is missing does the
/// resolver look further.
///
/// **When.** Accesses that need the bytes: reads and writes, except `.forDeleting` and
/// `.forReplacing` writes (nothing of the old bytes is needed) and metadata-only accesses
/// (`.immediatelyAvailableMetadataOnly`, `.contentIndependentMetadataOnly`). A `.forMoving` write
/// or a `.forUploading` read of a *folder* brings back every evicted item inside it first (a
/// placeholder must never travel without its item). Before any lock is taken and before any
/// presenter is asked: the agent lands the download with a coordinated write of its own, which
/// must not wait for this access.
///
/// **Waiting.** The resolver waits for the download within the coordinator's ``Coordinator/timeout``
/// and honours ``Coordinator/cancel()`` and task cancellation (``EvictedItemWait``); it throws
/// ``CoordinationError/itemNotDownloaded(_:reason:)`` when the download cannot happen (offline, no
/// agent, refused). Then the accessor is not run and no lock is held. A thread already inside
/// another coordinated access is not made to wait (it may hold a lock the agent's write needs):
/// an evicted item fails at once with `itemNotDownloaded`; a missing item that is not evicted
/// (a new file) is not held up.
public enum EvictedItemResolution {
    /// Whether any resolver is registered (read on every coordination).
    private static let isActive = Atomic<Bool>(false)
    /// The registered resolvers (few; registration is rare).
    private static let resolvers = Locked<[any EvictedItemResolver]>([])

    /// Registers `resolver` for this process. Resolvers registered earlier are asked first; a
    /// resolver is asked only about paths it ``EvictedItemResolver/covers(_:)``. Any thread.
    public static func register(_ resolver: any EvictedItemResolver) {
        resolvers.withLock {
            $0.append(resolver)
            isActive.store(true, ordering: .releasing)
        }
    }

    /// Removes every registered resolver (a process that must never wait for downloads).
    public static func unregisterAll() {
        resolvers.withLock {
            $0.removeAll()
            isActive.store(false, ordering: .releasing)
        }
    }

    /// Brings the item at `itemPath` (canonical) back when it is evicted, before `kind` is
    /// coordinated. Returns at once when no resolver is registered, the kind needs no bytes, the
    /// path is outside every resolver's folders, or the item is there (and is not a folder being
    /// moved or snapshotted).
    static func resolveIfEvicted(_ itemPath: String, kind: FileAccessIntent.Kind, context: WaitContext) throws(CoordinationError) {
        guard isActive.load(ordering: .acquiring) else { return }
        var wholeFolder = false
        switch kind {
        case .writing(let options):
            if !options.isDisjoint(with: [.forDeleting, .forReplacing, .contentIndependentMetadataOnly]) { return }
            wholeFolder = options.contains(.forMoving)
        case .reading(let options):
            if options.contains(.immediatelyAvailableMetadataOnly) { return }
            wholeFolder = options.contains(.forUploading)
        }
        let concerned = resolvers.withLock { $0.filter { $0.covers(itemPath) } }
        guard !concerned.isEmpty else { return }
        var info = stat()
        let exists = CanonicalPath.withCString(itemPath, { lstat($0, &info) }) == 0
        if exists && !(wholeFolder && (info.st_mode & S_IFMT) == S_IFDIR) { return }
        let url = CanonicalPath.url(for: itemPath, isDirectory: exists)
        // The agent lands a download with a coordinated write: a thread inside another
        // coordinated access may hold a lock that write needs, so it must not wait for it.
        if !ThreadClaims.holdsNothing {
            for resolver in concerned where resolver.needsDownload(url) {
                throw .itemNotDownloaded(url, reason: "it was accessed from inside another coordinated access, which may hold what its download needs; access it on its own first")
            }
            return
        }
        let wait = EvictedItemWait(context: context)
        try DownloadWaits.waiting(for: itemPath) { () throws(CoordinationError) in
            for resolver in concerned {
                try resolver.bringBack(url, wait: wait)
            }
        }
    }
}

/// Something that can bring evicted items back (the Ubiquity module's `FilesOnDemand`, which asks
/// the sync agent). Called on the coordinating thread, before any lock is taken.
public protocol EvictedItemResolver: Sendable {
    /// Whether `path` (absolute, canonical) lies where this resolver's items can be evicted. Cheap:
    /// called on every coordination while the resolver is registered.
    func covers(_ path: String) -> Bool

    /// Whether an access to `url` needs a download first: `url` is missing and it, or an item
    /// above it, is evicted; or `url` is a folder with evicted items inside. Never blocks for long
    /// (a few `lstat`s; a walk of the folder for a folder).
    func needsDownload(_ url: URL) -> Bool

    /// Called when the item at `url` is missing, or is a folder being moved or snapshotted: brings
    /// back what is evicted there (the item, the item above it that is evicted, or the evicted
    /// items inside the folder) and returns once it is in place; returns at once when nothing is
    /// evicted (a new item being created). Waits with `wait` (its ``EvictedItemWait/check()`` ends
    /// the wait on timeout or cancellation).
    ///
    /// - Throws: ``CoordinationError/itemNotDownloaded(_:reason:)`` when it cannot be brought back;
    ///   `.cancelled` from `wait`.
    func bringBack(_ url: URL, wait: EvictedItemWait) throws(CoordinationError)
}

/// The coordinator's timeout and cancellation, for an ``EvictedItemResolver`` that waits for a
/// download. Not a lock wait: nothing is held while it waits.
public struct EvictedItemWait: Sendable {
    let context: WaitContext

    /// Throws ``CoordinationError/cancelled`` once the coordinator (or the awaiting task) is
    /// cancelled, ``CoordinationError/timedOut`` once its timeout has passed.
    public func check() throws(CoordinationError) { try context.check() }

    /// Blocks the calling thread for up to `interval`, or less when the coordination is cancelled
    /// (or its deadline comes first). Then call ``check()``.
    public func pause(upTo interval: Duration) {
        var wait = interval
        if let deadline = context.deadline {
            let left = deadline - ContinuousClock.now
            if left < wait { wait = max(left, .zero) }
        }
        guard wait > .zero else { return }
        let wakeup = DispatchSemaphore(value: 0)
        let unregister = context.onCancel { wakeup.signal() }
        defer { unregister() }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        _ = wakeup.wait(timeout: .now() + seconds)
    }
}
