import Foundation

extension Coordinator {
    /// How a single simple access can skip the presenter round of `perform`.
    enum FastRoute: Equatable {
        /// No presenter, in this process or another, presents the item or a folder above it.
        case noPresenters
        /// The only presenter concerned is this coordinator's own (a document saving its own
        /// file), which is never messaged about its own accesses: nobody is told anything, but
        /// the change monitor must still not report a write as someone else's change.
        case ownPresenterOnly
    }

    /// One intent, the common case: when no presenter other than the coordinator's own can be
    /// concerned, the item is not a directory being deleted/moved/replaced and no snapshot or link
    /// resolution is asked for, the access is just "take the lock, run, release" — no presenter
    /// round, no `lstat` of the item, no allocation beyond the look-ups. Everything else goes
    /// through `perform` (same rules, same locks). Presenters in other processes are looked for
    /// before waiting for the lock (they must be asked before any lock is taken) and again once it
    /// is held; this process's presenters once it is held. A presenter concerned then — registered
    /// meanwhile (from inside its own coordinated access, which the lock ordered before this one),
    /// or there all along — makes the access give the lock back and go through `perform`, so it
    /// is told as it would have been.
    ///
    /// If a coordinated move (``item(at:didMoveTo:)``) moved the item while this call waited for
    /// its lock, the lock is given back and the item is coordinated again where it is now, so the
    /// accessor gets the new URL — as `perform` does.
    func performSingle<T>(_ url: URL, _ kind: FileAccessIntent.Kind, _ accessor: (URL) throws -> T) throws -> T {
        guard Self.isSimple(kind) else {
            return try perform([FileAccessIntent(url: url, kind: kind)]) { urls in try accessor(urls[0]) }
        }
        let isWriting: Bool
        if case .writing = kind { isWriting = true } else { isWriting = false }
        let access: LockAccess = isWriting ? .write : .read
        let context = WaitContext(timeout: timeout, token: cancellation)
        var url = url
        let runtime = self.runtime
        let moveLog = runtime.moveLog
        for _ in 0...MoveLog.retryLimit {
            // Read before the path is resolved: a move recorded after this point is seen below.
            let sequence = moveLog.sequence
            let itemPath: String, package: String?
            if let remembered = ResolvedURLMemo.shared.lookup(url, caches: runtime.paths, packages: runtime.packageExtensions) {
                (itemPath, package) = remembered
            } else {
                guard url.isFileURL else {
                    return try perform([FileAccessIntent(url: url, kind: kind)]) { urls in try accessor(urls[0]) }
                }
                let generation = ResolvedURLMemo.Generations(caches: runtime.paths, packages: runtime.packageExtensions)
                itemPath = CanonicalPath.of(url, in: runtime.paths)
                package = runtime.packageExtensions.outermostPackage(containing: itemPath)
                ResolvedURLMemo.shared.store(url, caches: runtime.paths, packages: runtime.packageExtensions,
                                             generation: generation, itemPath: itemPath, package: package)
            }
            try EvictedItemResolution.resolveIfEvicted(itemPath, kind: kind, context: context)
            // Presenters in other processes are asked before any lock is taken (Docs/RemotePresenters.md,
            // invariant 1), so they are looked for first. This process's presenters are looked for
            // once, with the lock held (below): `perform` asks them only after locking too, and a
            // second look at the registry (hashing the path and its folders when anyone presents
            // anything) would cost as much as the first.
            if runtime.remote.mayConcern(itemPath) {
                return try perform([FileAccessIntent(url: url, kind: kind)]) { urls in try accessor(urls[0]) }
            }
            try context.check()
            let lockPath = package ?? itemPath
            let owner = effectiveOwner
            try owner.acquire(access, path: lockPath, stepper: LockStepper(context: context, owner: owner)) { () throws(CoordinationError) in
                let directory = try runtime.lockDirectory()
                return (runtime.lockTable.file(for: lockPath, in: directory), directory)
            }
            if moveLog.sequence != sequence {
                let current = moveLog.currentPath(of: itemPath, since: sequence)
                if current != itemPath {
                    // Moved while we waited: give the lock back and lock the item where it is now.
                    owner.release(access, on: lockPath)
                    url = CanonicalPath.url(for: current)
                    continue
                }
            }
            guard let route = fastRoute(itemPath, inPackage: package != nil) else {
                // Presenters are concerned (or came while we waited): give the lock back and tell them.
                owner.release(access, on: lockPath)
                return try perform([FileAccessIntent(url: url, kind: kind)]) { urls in try accessor(urls[0]) }
            }
            let watched = isWriting && route == .ownPresenterOnly
            if watched { runtime.changeMonitor.beginCoordinatedWrite(itemPath, isPresentedItem: true) }
            let lock = ItemLock(path: lockPath, access: access)
            AccessorFrames.push(self, owner: owner, lock: lock)  // also the thread's claim (`ThreadClaims`)
            defer {
                AccessorFrames.pop()
                if watched { runtime.changeMonitor.endCoordinatedWrite(itemPath, isPresentedItem: true) }
                owner.release(access, on: lockPath)
            }
            return try accessor(url)
        }
        throw CoordinationError.itemKeptMoving(url)
    }

    /// The fast route for a simple access to `itemPath`, or `nil` when presenters must be asked
    /// (`perform`): one of another process may be concerned, or one of this process other than
    /// the own one, or the item is in a package (whose presenters inside are concerned too).
    private func fastRoute(_ itemPath: String, inPackage: Bool) -> FastRoute? {
        if runtime.remote.mayConcern(itemPath) { return nil }  // presenters in other processes
        // No presenter in this process at all (one load): the common case costs nothing more.
        if runtime.registry.isEmpty { return .noPresenters }
        switch runtime.registry.concern(at: itemPath, own: filePresenter.map(PresenterID.init)) {
        case .nobody: return .noPresenters
        case .onlyOwn: return inPackage ? nil : .ownPresenterOnly
        case .others: return nil
        }
    }

    private static func isSimple(_ kind: FileAccessIntent.Kind) -> Bool {
        switch kind {
        case .reading(let options):
            return options.isSubset(of: [.withoutChanges, .immediatelyAvailableMetadataOnly])
        case .writing(let options):
            return options.isSubset(of: [.forMerging, .contentIndependentMetadataOnly])
        }
    }
}
