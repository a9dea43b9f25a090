import Foundation

extension Coordinator {
    /// One intent, the common case: when no presenter can be concerned, the item is not a
    /// directory being deleted/moved/replaced and no snapshot or link resolution is asked for,
    /// the access is just "take the lock, run, release" — no presenter round, no allocation beyond
    /// the look-ups. Everything else goes through `perform` (same rules, same locks).
    func performSingle<T>(_ intent: FileAccessIntent, _ accessor: (URL) throws -> T) throws -> T {
        guard Self.isSimple(intent), intent.url.isFileURL else {
            return try perform([intent]) { urls in try accessor(urls[0]) }
        }
        let itemPath = CanonicalPath.of(intent.url)
        if PresenterRegistry.shared.mayConcern(itemPath) {
            return try perform([intent]) { urls in try accessor(urls[0]) }
        }
        let context = WaitContext(timeout: timeout, token: cancellation)
        try context.check()
        let lockPath = PackageExtensions.outermostPackage(containing: itemPath) ?? itemPath
        let owner = effectiveOwner
        let access: LockOwner.Access = intent.isWriting ? .write : .read
        let sequence = MoveLog.sequence
        try owner.acquire(access, path: lockPath, stepper: LockStepper(context: context, owner: owner)) { () throws(CoordinationError) in
            let directory = try LockDirectory.current()
            return (LockTable.shared.file(for: lockPath, in: directory), directory)
        }
        if MoveLog.sequence != sequence, MoveLog.currentPath(of: itemPath, since: sequence) != itemPath {
            // Moved while we waited: start again the long way, which follows the move.
            owner.release(access, on: lockPath)
            return try perform([intent]) { urls in try accessor(urls[0]) }
        }
        let record = ThreadClaims.Held(path: lockPath, exclusive: intent.isWriting, subtree: false, owner: owner)
        ThreadClaims.push(record)
        defer {
            ThreadClaims.pop(1)
            owner.release(access, on: lockPath)
        }
        return try accessor(intent.url)
    }

    private static func isSimple(_ intent: FileAccessIntent) -> Bool {
        switch intent.kind {
        case .reading(let options):
            return options.isSubset(of: [.withoutChanges, .immediatelyAvailableMetadataOnly])
        case .writing(let options):
            return options.isSubset(of: [.forMerging, .contentIndependentMetadataOnly])
        }
    }
}
