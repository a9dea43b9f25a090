import Foundation
import Glibc

/// One intent, resolved against the file system: which canonical path it names, which path is
/// actually locked (an item inside a package locks the package) and how.
struct ResolvedAccess: Sendable {
    var intent: FileAccessIntent
    /// The canonical path of the item itself.
    var itemPath: String
    /// The path whose lock is taken: the outermost enclosing package, or the item.
    var lockPath: String
    /// Whether the item is a directory / existed before the access. Looked up (one `lstat`) by
    /// `inspect()` once the locks are held — never before, since the item may be created, moved
    /// into place or removed while the coordinator waits — and only when something depends on it:
    /// a delete/move/replace, an upload read, or registered presenters.
    var isDirectory = false
    var existedBefore = true
    let needsInspection: Bool

    init(_ intent: FileAccessIntent, inspect: Bool, runtime: CoordinationRuntime) {
        self.intent = intent
        if case .reading(let options) = intent.kind, options.contains(.resolvesSymbolicLink) {
            itemPath = CanonicalPath.resolvingItem(intent.url, in: runtime.paths)
        } else {
            itemPath = CanonicalPath.of(intent.url, in: runtime.paths)
        }
        lockPath = runtime.packageExtensions.outermostPackage(containing: itemPath) ?? itemPath
        var needsKind = inspect || runtime.remote.mayConcern(itemPath)  // remote: presenters elsewhere
        switch intent.kind {
        case .writing(let options):
            needsKind = needsKind || !options.isDisjoint(with: [.forDeleting, .forMoving, .forReplacing, .forEvicting])
        case .reading(let options):
            needsKind = needsKind || options.contains(.forUploading)
        }
        needsInspection = needsKind
    }

    /// Looks the item up, with its lock held (see `isDirectory`).
    mutating func inspect() {
        guard needsInspection else { return }
        inspectNow()
    }

    /// Looks the item up now, whatever `needsInspection` says: for choosing whom to ask before
    /// the locks are taken (`PresenterMessenger.askOtherProcessesBeforeLocking`).
    mutating func inspectNow() {
        var info = stat()
        existedBefore = CanonicalPath.withCString(itemPath) { lstat($0, &info) } == 0
        isDirectory = existedBefore && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Resolves intents and inspects the items at once (when presenters are registered, or an
    /// option needs it) — for callers that hold no lock on them, such as a batch's `prepare`.
    static func resolve(_ intents: [FileAccessIntent], runtime: CoordinationRuntime) -> [ResolvedAccess] {
        var accesses = resolveBeforeLocking(intents, runtime: runtime)
        for index in accesses.indices { accesses[index].inspect() }
        return accesses
    }

    /// Resolves intents without looking at the items yet: the caller takes the locks, then calls
    /// `inspect()` on each.
    static func resolveBeforeLocking(_ intents: [FileAccessIntent], runtime: CoordinationRuntime) -> [ResolvedAccess] {
        let inspect = !runtime.registry.isEmpty
        return intents.map { ResolvedAccess($0, inspect: inspect, runtime: runtime) }
    }

    var isWrite: Bool { intent.isWriting }
    var readingOptions: Coordinator.ReadingOptions {
        if case .reading(let options) = intent.kind { return options }
        return []
    }
    var writingOptions: Coordinator.WritingOptions {
        if case .writing(let options) = intent.kind { return options }
        return []
    }

    /// A delete, move or replace: for a directory it locks everything inside.
    var removesItem: Bool {
        !writingOptions.isDisjoint(with: [.forDeleting, .forMoving, .forReplacing, .forEvicting])
    }

    /// An eviction (files on demand): presenters are asked to accommodate it.
    var evicts: Bool { writingOptions.contains(.forEvicting) }
    var deletes: Bool { !writingOptions.isDisjoint(with: [.forDeleting, .forReplacing]) }

    var isInsidePackage: Bool { lockPath != itemPath }

    /// Whether the lock must also cover everything inside the item *if it is a directory once its
    /// write lock is held*: a delete, move or replace that is not inside a package (inside one,
    /// the package lock covers it all). `HeldLocks` decides, with the lock held.
    var locksSubtreeIfDirectory: Bool { isWrite && removesItem && !isInsidePackage }

    /// The URL handed to the accessor.
    var accessorURL: URL {
        if case .reading(let options) = intent.kind, options.contains(.resolvesSymbolicLink) {
            return CanonicalPath.url(for: itemPath, isDirectory: isDirectory)
        }
        return intent.url
    }
}

/// What a coordination asks to lock on one path — a request: `HeldLocks` takes it, and records
/// what it took as `ItemLock`s. The accesses of one coordination are merged per path (a path read
/// and written is written).
struct LockClaim: Sendable, Equatable {
    /// A read or a write of the path.
    let lock: ItemLock
    /// A delete/move/replace: also lock everything inside the path when, once its write lock is
    /// held, it turns out to be a directory (decided by `HeldLocks`, which then takes `.tree`).
    let subtreeIfDirectory: Bool

    init(lock: ItemLock, subtreeIfDirectory: Bool) {
        self.lock = lock
        self.subtreeIfDirectory = subtreeIfDirectory
    }

    /// The claim of one access.
    init(_ access: ResolvedAccess) {
        lock = ItemLock(path: access.lockPath, access: access.isWrite ? .write : .read)
        subtreeIfDirectory = access.locksSubtreeIfDirectory
    }

    /// The claims of a set of accesses, in path order.
    static func claims(for accesses: [ResolvedAccess]) -> [LockClaim] {
        if accesses.count == 1, let access = accesses.first { return [LockClaim(access)] }
        var byPath: [String: LockClaim] = [:]
        for access in accesses {
            let claim = LockClaim(access)
            byPath[claim.lock.path] = byPath[claim.lock.path]?.merged(with: claim) ?? claim
        }
        return byPath.values.sorted { $0.lock.path < $1.lock.path }
    }

    /// This claim and `other`, on the same path, as one: a write when either writes.
    private func merged(with other: LockClaim) -> LockClaim {
        let access: LockAccess = lock.isExclusive || other.lock.isExclusive ? .write : .read
        return LockClaim(lock: ItemLock(path: lock.path, access: access),
                         subtreeIfDirectory: subtreeIfDirectory || other.subtreeIfDirectory)
    }
}
