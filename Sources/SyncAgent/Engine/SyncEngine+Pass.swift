import Foundation

/// What one pass did.
public struct SyncPassReport: Sendable {
    /// The plan (empty when the server could not be listed).
    public var plan = SyncPlan()
    /// The steps that completed.
    public var completed: [SyncStep] = []
    /// The steps that failed, with why (they are planned again by the next pass).
    public var failed: [(step: SyncStep, error: SyncStepError)] = []
    /// Whether the server could not be reached (the rest of the pass was left for later).
    public var wentOffline = false
    /// Whether the pass did not run (paused or refused).
    public var didNotRun = false
    /// The items the space budget evicted after the steps (``SyncEngineConfiguration/spaceBudget``).
    public var evictedForSpace: [String] = []
}

extension SyncEngine {
    /// Runs one pass now: scan, list, plan, run the steps, journal each. Never throws: a failed
    /// step is reported (``SyncPassReport/failed`` and the status's errors) and planned again by
    /// the next pass; a transient server error ends the pass (``SyncPassReport/wentOffline``).
    /// Paused, or while another pass of this engine runs (the actor is re-entered while a pass
    /// waits for the server), it does nothing and says so (``SyncPassReport/didNotRun``).
    public func syncOnce() async -> SyncPassReport {
        var report = SyncPassReport()
        recordedVersionPaths = nil
        guard !isPaused, !isPassRunning else { report.didNotRun = true; return report }
        isPassRunning = true
        defer { isPassRunning = false }
        let started = Date()
        statusBox.update { $0.state = .syncing }
        let container = configuration.containerURL
        let pending = changeLog?.take()
        let before = localState
        let scanned = try? await offThePool { () throws(SyncStepError) -> (LocalScan, LocalScanState) in
            var state = before
            let scan = state.update(container, pending: pending)
            return (scan, state)
        }
        let scan = scanned?.0 ?? LocalScan(items: nil)
        localState = scanned?.1 ?? LocalScanState()
        conflictsBegunThisPass = []
        // Server-side renames a killed agent left half done are finished or undone first.
        if !journal.pendingMoves.isEmpty { await recoverPendingMoves() }
        var listing: RemoteListing
        do {
            listing = try await listServer()
        } catch {
            if error.isTransient {
                report.wentOffline = true
                statusBox.update { $0.state = .offline(reason: error.description, retryAt: nil) }
                refuseAllDownloadWaiters(reason: Self.offlineReason(error.description))
            } else {
                statusBox.record(error.description, path: nil)
                statusBox.update { $0.state = .idle }
                refuseAllDownloadWaiters(reason: "the server cannot be listed: \(error.description)")
            }
            return report
        }
        reportSkipped(scan.skipped)
        // Package documents become one item each: the planner never sees their inner files.
        var (localItems, remoteItems, baseEntries) = (scan.items, listing.items, journal.entries)
        packageView = PackageView(rules: packageRules, local: &localItems, remote: &remoteItems, base: &baseEntries)
        listing.items = remoteItems
        var input = SyncPlanInput(base: baseEntries, local: localItems, remote: remoteItems,
                                  remoteRootFileID: listing.root?.fileID, knownRootFileID: journal.server.rootFileID,
                                  approvedDeletions: approvedDeletions, approvedEmptyRoot: approvedEmptyRoot)
        input.localUncertain = scan.uncertain
        (input.earlierServerDeletions, input.earlierLocalDeletions) = deletionBurst.counts(window: configuration.guards.deletionBurstWindow)
        // Nothing happened in the container since the last pass (the watcher saw no event).
        let quiet = pending.map { !$0.full && $0.folders.isEmpty && $0.subtrees.isEmpty } ?? false
        let (evicted, writtenOver) = EvictedItems.evictedAndWrittenOver(known: baseEntries, local: localItems, in: configuration.containerURL,
                                                                        quiet: quiet, memo: &evictedMemo)
        let wanted = wantedDownloads(evicted)
        input.evicted = evicted.filter { !wanted.contains($0) }
        input.writtenOverEvicted = writtenOver
        // An evicted item asked for (or pinned) is planned as new on the server: downloaded,
        // never a deletion.
        for path in wanted { input.base[path] = nil }
        input.packages = packageView.packages
        // The same input as the last pass (an idle poll) gives the same plan: not made again.
        var plan = cachedListing?.plan(input, with: planner) ?? planner.plan(input)
        if let refusal = plan.refusal {
            report.plan = plan
            lastRefusalWasEmptyRoot = scan.items?.isEmpty == true
            statusBox.update { $0.state = .refused(reason: refusal) }
            refuseAllDownloadWaiters(reason: refusal)
            report.didNotRun = true
            return report
        }
        await settleEvictedItems(evicted, listing: listing, plan: &plan, knownItems: baseEntries.count)
        report.plan = plan
        lastRefusalWasEmptyRoot = false
        lastHeld = plan.heldDeletions + plan.heldLocalDeletions
        let heldSetID = Self.heldSetID(fromServer: plan.heldDeletions, madeHere: plan.heldLocalDeletions)
        lastHeldSetID = heldSetID
        if plan.serverReplaced {
            statusBox.record("the server looks replaced or rolled back: synced as a new server "
                + "(nothing deleted on either side; differing files kept as conflict versions)", path: nil)
        }
        statusBox.update { status in
            status.heldDeletions = (plan.heldDeletions.isEmpty ? []
                : [HeldDeletion(fromServer: true, count: plan.heldDeletions.count, examples: Array(plan.heldDeletions.prefix(5)),
                                setID: heldSetID)])
                + (plan.heldLocalDeletions.isEmpty ? []
                : [HeldDeletion(fromServer: false, count: plan.heldLocalDeletions.count, examples: Array(plan.heldLocalDeletions.prefix(5)),
                                setID: heldSetID)])
            status.queued = plan.steps.compactMap { step in step.action.map { QueuedItem(path: step.path, action: $0) } }
            status.queuedCount = status.queued.count
        }
        var newConflicts = Set<String>()
        // A folder or package being replaced or deleted by another agent is missing for an
        // instant (moved aside): no local deletion while the server holds an item aside.
        var deferDeletions = false
        if plan.steps.contains(where: { if case .deleteLocal = $0 { true } else { false } }) {
            deferDeletions = (try? await serverHasItemsAside()) ?? true
        }
        for step in plan.steps {
            if isPaused || Task.isCancelled { break }
            do throws(SyncStepError) {
                if deferDeletions, case .deleteLocal(let path) = step {
                    throw .deferred(path: path, reason: "another device is replacing or deleting an item on the server")
                }
                try await execute(step, input: input, listing: listing, newConflicts: &newConflicts)
                report.completed.append(step)
                recordInBurst(step)
            } catch {
                report.failed.append((step, error))
                if error.isTransient {
                    report.wentOffline = true
                    statusBox.update { $0.state = .offline(reason: error.description, retryAt: nil) }
                    break
                }
                if case .deferred = error {} else { statusBox.record(error.description, path: step.path) }
            }
            statusBox.update { status in
                if let index = status.queued.firstIndex(where: { $0.path == step.path }) { status.queued.remove(at: index) }
                status.queuedCount = status.queued.count
            }
        }
        finishRequestedDownloads(wanted, report: report, listing: listing)
        if !report.wentOffline {
            await syncConflictArea(listing, skipping: newConflicts.union(conflictsBegunThisPass))
            if listing.root?.fileID != nil, listing.root?.fileID != journal.server.rootFileID {
                try? journal.setServer(JournalServerIdentity(rootFileID: listing.root?.fileID))
            }
            approvedEmptyRoot = false
            let evictedForSpace = await enforceSpaceBudget(excluding: wanted)
            if !evictedForSpace.isEmpty { report.evictedForSpace = evictedForSpace }
        }
        let conflicted = Set(journal.conflicts.values.map(\.itemPath)).sorted()
        statusBox.update { status in
            status.conflicted = conflicted
            status.scannedThrough = started
            if !report.wentOffline {
                status.lastSync = Date()
                status.state = self.isPaused ? .paused : .idle
            }
        }
        return report
    }

    /// The server's tree: one `Depth: 1` listing per folder, or — on a server whose folder tags
    /// change with anything below them — the last listing again when the root's tag is unchanged.
    func listServer() async throws(RemoteStoreError) -> RemoteListing {
        if await store.capabilities.folderTagsPropagate, let cached = cachedListing, let cachedTag = cached.root?.tag {
            let root = try await store.item(at: .root)
            if root?.tag == cachedTag { return cached }
        }
        let listing = try await RemoteLister.list(store, previous: cachedListing)
        cachedListing = listing
        return listing
    }

    /// Records local items that are not synced (links, names that are not UTF-8), once each.
    /// Notes a deletion step carried out: an approved one leaves the approved set, an unapproved
    /// one counts in the burst window of the mass-deletion guard.
    private func recordInBurst(_ step: SyncStep) {
        switch step {
        case .deleteLocal(let path), .deleteRemote(let path):
            let fromServer = if case .deleteLocal = step { true } else { false }
            if approvedDeletions.remove(path) == nil { deletionBurst.record(fromServer: fromServer) }
        default: break
        }
    }

    func reportSkipped(_ skipped: [(path: String, reason: String)]) {
        for (path, reason) in skipped where !reportedSkips.contains(path) {
            if reportedSkips.count >= 10_000 { break }
            reportedSkips.insert(path)
            statusBox.record("not synced: \(reason)", path: path)
        }
    }

    /// Runs one step.
    func execute(_ step: SyncStep, input: SyncPlanInput, listing: RemoteListing,
                 newConflicts: inout Set<String>) async throws(SyncStepError) {
        let path = step.path
        let base = input.base[path]
        if isPackage(path) {
            switch step {
            case .upload:
                return try await uploadPackage(path, remote: listing.items[path], base: base)
            case .download:
                guard let remote = listing.items[path] else { return }
                return try await downloadPackage(path, remote: remote, base: base, newConflicts: &newConflicts)
            case .conflict:
                guard let remote = listing.items[path] else { return }
                return try await resolvePackageConflict(path, remote: remote, downloaded: nil, base: base, newConflicts: &newConflicts)
            case .deleteLocal:
                return try await deletePackageLocal(path, base: base)
            case .deleteRemote:
                return try await deletePackageRemote(path, remote: listing.items[path])
            default:
                break
            }
        }
        switch step {
        case .upload:
            try await upload(path, remote: listing.items[path], base: base)
        case .download:
            guard let remote = listing.items[path] else { return }
            try await download(path, remote: remote, base: base, newConflicts: &newConflicts)
        case .conflict:
            guard let remote = listing.items[path] else { return }
            try await resolveConflict(path, remote: remote, downloaded: nil, base: base, newConflicts: &newConflicts)
        case .makeRemoteFolder:
            let folder = try remotePath(path)
            try await onServer { () async throws(RemoteStoreError) in try await store.makeFolder(folder) }
            try await recordFolder(path)
        case .makeLocalFolder:
            let local = self.local
            try await offThePool { () throws(SyncStepError) in
                try local.checkFolders(of: path + "/x")
                try LocalFiles.makeFolders(local.url(path).path)
            }
            try await recordFolder(path)
        case .recordFolder:
            try await recordFolder(path)
        case .deleteLocal:
            let local = self.local
            let isFolder = base?.isFolder ?? false, expected = base?.local
            let gone = try await offThePool { () throws(SyncStepError) -> Bool in
                try local.delete(path, isFolder: isFolder, expected: expected)
            }
            if gone { try forget(path) }
        case .deleteRemote:
            try await deleteRemote(path, remote: listing.items[path])
        case .forget:
            try forget(path)
        case .kindClash:
            throw .local(path: path, reason: "a file on one side and a folder on the other: left alone until one is renamed")
        case .moveRemote(let source, let destination):
            guard let remote = listing.items[source], let moved = input.local?[destination] else { return }
            try await moveRemote(source, to: destination, remote: remote, fingerprint: moved.fingerprint, base: input.base[source])
        case .moveLocal(let source, let destination):
            guard let remote = listing.items[destination], let expected = input.base[source]?.local else { return }
            try await moveLocal(source, to: destination, remote: remote, expected: expected, base: input.base[source])
        }
    }

    func remotePath(_ path: String) throws(SyncStepError) -> RemotePath {
        guard let remote = RemotePath(path) else { throw .local(path: path, reason: "not a valid name for the server") }
        return remote
    }

    func record(_ entry: JournalEntry) throws(SyncStepError) {
        // A step touched the item here (or may have): its folder is read again by the next pass
        // even before the watcher's report of it arrives.
        changeLog?.markChanged(LocalScanState.parent(of: entry.path))
        do { try journal.put(entry.remembering(journal.entries[entry.path])) } catch { throw .journal(error) }
    }

    private func recordFolder(_ path: String) async throws(SyncStepError) {
        try record(JournalEntry(path: path, isFolder: true, local: nil, remoteTag: nil))
    }

    /// Forgets `path` and everything the journal knows below it.
    func forget(_ path: String) throws(SyncStepError) {
        changeLog?.markChanged(LocalScanState.parent(of: path))
        let prefix = path + "/"
        do {
            for key in journal.entries.keys where key.hasPrefix(prefix) { try journal.remove(path: key) }
            if journal.entries[path] != nil { try journal.remove(path: path) }
        } catch {
            throw .journal(error)
        }
    }
}

/// Runs a store call, its error as a ``SyncStepError``.
func onServer<T>(isolation: isolated (any Actor)? = #isolation,
                 _ call: () async throws(RemoteStoreError) -> T) async throws(SyncStepError) -> T {
    do { return try await call() } catch { throw .remote(error) }
}
