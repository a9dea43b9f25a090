import Foundation

extension Coordinator {
    /// One intent, the common case: when no presenter can be concerned, the item is not a
    /// directory being deleted/moved/replaced and no snapshot or link resolution is asked for,
    /// the access is just "take the lock, run, release" — no presenter round, no allocation beyond
    /// the look-ups. Everything else goes through `perform` (same rules, same locks).
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
        let access: LockOwner.Access = isWriting ? .write : .read
        let context = WaitContext(timeout: timeout, token: cancellation)
        var url = url
        let runtime = self.runtime
        let moveLog = runtime.moveLog
        for _ in 0...MoveLog.retryLimit {
            // Read before the path is resolved: a move recorded after this point is seen below.
            let sequence = moveLog.sequence
            let itemPath = CanonicalPath.of(url, in: runtime.paths)
            if runtime.registry.mayConcern(itemPath) || runtime.remote.mayConcern(itemPath) {  // remote: presenters elsewhere
                return try perform([FileAccessIntent(url: url, kind: kind)]) { urls in try accessor(urls[0]) }
            }
            try context.check()
            let lockPath = runtime.packageExtensions.outermostPackage(containing: itemPath) ?? itemPath
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
            let record = ThreadClaims.Held(path: lockPath, exclusive: isWriting, subtree: false, owner: owner)
            ThreadClaims.push(record)
            defer {
                ThreadClaims.pop(1)
                owner.release(access, on: lockPath)
            }
            return try accessor(url)
        }
        throw CoordinationError.itemKeptMoving(url)
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
