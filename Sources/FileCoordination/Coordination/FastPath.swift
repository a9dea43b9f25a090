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
    /// through `perform` (same rules, same locks). The route is decided before waiting for the
    /// lock and checked again once it is held: a presenter registered meanwhile (from inside its
    /// own coordinated access, which the lock ordered before this one) sends the access through
    /// `perform`, so it is told as it would have been.
    ///
    /// If a coordinated move (``item(at:didMoveTo:)``) moved the item while this call waited for
    /// its lock, the lock is given back and the item is coordinated again where it is now, so the
    /// accessor gets the new URL — as `perform` does.
    func performSingle<T>(_ url: URL, _ kind: FileAccessIntent.Kind, _ accessor: (URL) throws -> T) throws -> T {
        guard Self.isSimple(kind), url.isFileURL else {
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
            let itemPath = CanonicalPath.of(url, in: runtime.paths)
            try EvictedItemResolution.resolveIfEvicted(itemPath, kind: kind, context: context)
            let package = runtime.packageExtensions.outermostPackage(containing: itemPath)
            guard let route = fastRoute(itemPath, inPackage: package != nil) else {
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
            if fastRoute(itemPath, inPackage: package != nil) != route {
                // Presenters came or went while we waited: give the lock back and tell them.
                owner.release(access, on: lockPath)
                return try perform([FileAccessIntent(url: url, kind: kind)]) { urls in try accessor(urls[0]) }
            }
            let watched = isWriting && route == .ownPresenterOnly
            if watched { runtime.changeMonitor.beginCoordinatedWrite(itemPath, isPresentedItem: true) }
            let lock = ItemLock(path: lockPath, access: access)
            ThreadClaims.push(lock, owner: owner)
            AccessorFrames.push(self, owner: owner, lock: lock)
            defer {
                AccessorFrames.pop()
                ThreadClaims.pop(1)
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
