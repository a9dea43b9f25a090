import Foundation

/// One coordinated access in progress: locks held, presenters prepared, accessor not yet run.
///
/// `begin` does all the waiting (locks, then presenters' answers); `end` gives everything back
/// and tells presenters what changed. Between the two, the caller runs the accessor — on the same
/// thread for the synchronous calls, on the caller's `OperationQueue` for the queue variant.
struct CoordinatedAccess: Sendable {
    var accesses: [ResolvedAccess]
    var held: HeldLocks
    let reacquirers: PresenterMessenger.Reacquirers
    let messenger: PresenterMessenger
    let runtime: CoordinationRuntime
    /// The coordinator whose access this is (for `AccessorFrames`: a call made inside the
    /// accessor may join this access).
    let coordinator: Coordinator
    /// Snapshots made for `.forUploading` reads, removed in `end`.
    var snapshots: [String: URL] = [:]

    static func begin(
        _ intents: [FileAccessIntent], coordinator: Coordinator, taskToken: CancellationToken? = nil
    ) throws(CoordinationError) -> CoordinatedAccess {
        try validate(intents)
        let context = WaitContext(timeout: coordinator.timeout, token: coordinator.cancellation, taskToken: taskToken)
        try context.check()
        let runtime = coordinator.runtime
        let moveLog = runtime.moveLog
        var lastMoved = intents[0].url
        // If an item is moved (through a coordinator) while we wait, lock it again where it is now.
        for _ in 0...MoveLog.retryLimit {
            let sequence = moveLog.sequence
            var accesses = ResolvedAccess.resolveBeforeLocking(intents, runtime: runtime)
            for access in accesses {
                try EvictedItemResolution.resolveIfEvicted(access.itemPath, kind: access.intent.kind, context: context)
            }
            let owner = coordinator.effectiveOwner
            var messenger = PresenterMessenger(
                runtime: runtime, ownPresenter: coordinator.filePresenter, requester: owner, context: context)
            messenger.alreadyPrepared = coordinator.settings.withLock { Set($0.batchPrepared.keys) }
            // Other processes' presenters save (and step aside for a deletion) before we lock
            // anything: their answers may need locks (Docs/RemotePresenters.md, invariant 1).
            // Presenters there also relinquish now, unless the locks take long (`acquireLocks`).
            try messenger.askOtherProcessesBeforeLocking(accesses)
            let claims = LockClaim.claims(for: accesses)
            var held = try messenger.acquireLocks { (context) throws(CoordinationError) in
                try HeldLocks.acquire(claims, owner: owner, context: context, runtime: runtime)
            }
            if moveLog.sequence != sequence {
                let moved = accesses.map { moveLog.currentPath(of: $0.itemPath, since: sequence) }
                if zip(moved, accesses).contains(where: { $0 != $1.itemPath }) {
                    held.release()
                    messenger.giveBackEarlyRelinquishments()
                    for index in intents.indices where moved[index] != accesses[index].itemPath {
                        intents[index].url = CanonicalPath.url(for: moved[index])
                        lastMoved = intents[index].url
                    }
                    continue
                }
            }
            // What the items are (directory? there at all?) is looked up only now, locks held.
            for index in accesses.indices { accesses[index].inspect() }
            let reacquirers: PresenterMessenger.Reacquirers
            do {
                reacquirers = try messenger.prepare(accesses)
            } catch {
                held.release()
                throw error
            }
            if !runtime.registry.isEmpty {
                for written in accesses where written.isWrite { runtime.changeMonitor.beginCoordinatedWrite(written.itemPath) }
            }
            var access = CoordinatedAccess(accesses: accesses, held: held, reacquirers: reacquirers, messenger: messenger,
                                           runtime: runtime, coordinator: coordinator)
            do {
                try access.makeSnapshots()
            } catch {
                access.end()
                throw error
            }
            access.publishURLs()
            return access
        }
        throw .itemKeptMoving(lastMoved)
    }

    /// The URL the accessor gets for each intent.
    var urls: [URL] {
        if snapshots.isEmpty { return accesses.map(\.accessorURL) }
        return accesses.map { snapshots[$0.itemPath] ?? $0.accessorURL }
    }

    /// The caller's intents; `publishURLs` has set their `url`s to what the accessor must use.
    var intents: [FileAccessIntent] { accesses.map(\.intent) }

    /// Sets each intent's `url` to the URL its accessor gets (moved, link resolved, snapshot),
    /// once, before the accessor runs — the only moment `FileAccessIntent.url` changes after the wait.
    private func publishURLs() {
        for (access, url) in zip(accesses, urls) where access.intent.url != url { access.intent.url = url }
    }

    /// Runs `accessor` with this thread's claims recorded (for deadlock detection, and so that a
    /// call made inside the accessor can join this access: `AccessorFrames`).
    func run<T>(_ accessor: () throws -> T) rethrows -> T {
        let record = held.threadRecord()
        AccessorFrames.push(coordinator, owner: held.owner, locks: record)  // also the thread's claims
        defer { AccessorFrames.pop() }
        return try accessor()
    }

    /// Releases the locks, removes snapshots, tells presenters what changed and runs reacquirers.
    mutating func end() {
        for written in accesses where written.isWrite { runtime.changeMonitor.endCoordinatedWrite(written.itemPath) }
        held.release()
        for snapshot in snapshots.values { try? FileManager.default.removeItem(at: snapshot.deletingLastPathComponent()) }
        snapshots.removeAll()
        messenger.finish(accesses)
        PresenterMessenger.run(reacquirers)
    }

    private mutating func makeSnapshots() throws(CoordinationError) {
        let uploads = accesses.filter { $0.readingOptions.contains(.forUploading) && !$0.isWrite }
        guard !uploads.isEmpty else { return }
        for access in uploads {
            snapshots[access.itemPath] = try UploadSnapshot.make(of: access.accessorURL, isDirectory: access.isDirectory)
        }
        // The original is released early when every intent was an upload read.
        if uploads.count == accesses.count { held.release() }
    }

    private static func validate(_ intents: [FileAccessIntent]) throws(CoordinationError) {
        guard !intents.isEmpty else { throw .invalidRequest("no intent was given.") }
        for intent in intents {
            guard intent.url.isFileURL else { throw .invalidRequest("\(intent.url) is not a file URL.") }
            if case .writing(let options) = intent.kind, options.rawValue.nonzeroBitCount > 1 {
                throw .invalidRequest("use at most one writing option per intent (got \(options.rawValue)).")
            }
        }
    }
}
