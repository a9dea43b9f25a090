import CloudDocuments
import Foundation
import Ubiquity

extension SyncEngine {
    // MARK: Evicting

    /// Evicts the synced item at `path` (container-relative; files on demand): its placeholder
    /// replaces it (``ItemPlaceholder``) and its blocks are freed; the server keeps it.
    ///
    /// - a file: evicted alone;
    /// - a package document: evicted whole, as one unit (one placeholder with `isPackage`);
    /// - a folder: every synced file and package inside it (those already evicted are skipped).
    ///
    /// Returns `nil` when done, or why it was refused — the item is pinned, was never synced, has
    /// changes not yet uploaded (an open document with unsaved changes saves first, and then has
    /// them), is in conflict; for a folder, which items inside were not evicted and why (the
    /// others were). Runs on the engine's actor; the coordinated writes run off the cooperative pool.
    public func evict(_ path: String) async -> String? {
        if let pin = onDemand.pin(covering: path) {
            return "\(path) is pinned\(pin == path ? "" : " (through \(pin))"): `clouddocs unpin \(pin)` first"
        }
        guard let base = journal.entries[path] else { return "\(path) is not synced yet: only uploaded items can be evicted" }
        if base.isFolder { return await evictFolder(path) }
        return await evictItem(path, base: base)
    }

    /// Evicts every synced file and package inside the folder `path` (see ``evict(_:)``).
    private func evictFolder(_ folder: String) async -> String? {
        let prefix = folder + "/"
        let items = journal.entries.values.filter { !$0.isFolder && $0.path.hasPrefix(prefix) }.map(\.path).sorted()
        var refused: [String] = []
        var done = 0
        for path in items {
            if isEvictedHere(path) { continue }
            if let pin = onDemand.pin(covering: path) {
                refused.append("\(path) (pinned through \(pin))")
                continue
            }
            guard let base = journal.entries[path] else { continue }
            if let reason = await evictItem(path, base: base) { refused.append(reason) } else { done += 1 }
        }
        guard !refused.isEmpty else { return nil }
        let shown = refused.prefix(5).joined(separator: "; ") + (refused.count > 5 ? "; and \(refused.count - 5) more" : "")
        return "\(refused.count) of the items in \(folder) were not evicted (\(done) were): \(shown)"
    }

    /// Evicts one synced file or package.
    func evictItem(_ path: String, base: JournalEntry) async -> String? {
        if base.state == .inConflict || journal.conflicts.values.contains(where: { $0.itemPath == path })
            || UbiquitousItemStatus.hasUnresolvedConflicts(itemAt: local.url(path)) {
            return "\(path) has unresolved conflict versions: resolve them first"
        }
        let local = self.local, expected = base.local, tag = base.remoteTag?.value
        let isPackage = base.isPackage == true
        let removing = transferFile("evicted")
        do throws(SyncStepError) {
            let outcome = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Eviction in
                isPackage ? try local.evictPackage(path, expected: expected, remoteTag: tag, removing: removing)
                    : try local.evict(path, expected: expected, remoteTag: tag)
            }
            switch outcome {
            case .evicted:
                changeLog?.markChanged(LocalScanState.parent(of: path))
                if onDemand.downloads.remove(path) != nil { saveOnDemand() }
                checkedEvictedTags[path] = tag
                return nil
            case .notUploaded: return "\(path) has changes that are not uploaded yet: try again once it is uploaded"
            case .missing: return "\(path) is not here (already evicted, or deleted)"
            }
        } catch {
            return error.description
        }
    }

    /// Whether `path` is evicted here: its placeholder is beside where it was, and nothing is
    /// under its real name.
    func isEvictedHere(_ path: String) -> Bool {
        let url = local.url(path)
        if FileManager.default.fileExists(atPath: url.path) { return false }
        return ((try? ItemPlaceholder.read(forItemAt: url)) ?? nil) != nil
    }

    // MARK: Downloading on request

    /// Asks for the evicted item at `path` to be downloaded — a file, a package (whole), or every
    /// evicted item inside a folder: the next pass (started now) brings each back through a
    /// coordinated write and then removes its placeholder. The request is saved
    /// (``OnDemandState``): it survives a restart of the agent.
    ///
    /// `requestID` (the ``AgentRequest``'s) is answered later if the download fails: its reason
    /// goes to ``ContainerSyncStatus/refusedRequests`` after the first failed attempt — offline,
    /// deleted on the server, a failing step — while the path stays queued (except for an item
    /// the server no longer has) and downloads when it can.
    ///
    /// Returns `nil` when queued (or when the item is already here: nothing to do), or why not
    /// (not a synced item, not evicted; paused: queued, but nothing happens until resumed). Runs
    /// on the engine's actor.
    public func requestDownload(_ path: String, requestID: String? = nil) -> String? {
        guard let base = journal.entries[path] else { return "\(path) is not a synced item" }
        let paths: [String]
        if base.isFolder {
            let prefix = path + "/"
            paths = journal.entries.values.filter { !$0.isFolder && $0.path.hasPrefix(prefix) }.map(\.path)
                .filter(isEvictedHere).sorted()
        } else {
            if FileManager.default.fileExists(atPath: local.url(path).path) { return nil }
            guard isEvictedHere(path) else { return "\(path) is not evicted" }
            paths = [path]
        }
        guard !paths.isEmpty else { return nil }
        onDemand.downloads.formUnion(paths)
        saveOnDemand()
        if let requestID {
            for item in paths {
                var ids = downloadWaiters[item, default: []]
                ids.append(requestID)
                // Bounded: only the latest readers of an item that stays unanswered are answered.
                if ids.count > Self.maximumRefusals { ids.removeFirst(ids.count - Self.maximumRefusals) }
                downloadWaiters[item] = ids
            }
        }
        if isPaused { return "the agent is paused for this container: the download starts after `clouddocs agent resume`" }
        // Only under ``run()`` (its change log is set): a caller running passes itself gets them as before.
        if paths == [path], base.isPackage != true, changeLog != nil {
            Task { await self.downloadRequestedFile(path) }
        } else {
            syncNow()
        }
        return nil
    }

    /// The short way for one evicted file asked for while ``run()`` runs passes and none is under
    /// way (``requestDownload(_:requestID:)`` starts it in a task of its own): downloaded at
    /// once, before the pass that follows — a reader waits for the `GET` alone, not for a listing
    /// of the server first (on Apache with `FileETag Digest` a folder's listing hashes every file
    /// in it: as long again as the download of a large one).
    ///
    /// It is the pass's download step of a wanted evicted item (``download(_:remote:base:newConflicts:)``
    /// with no base: the server's current bytes, landed through a coordinated write from a
    /// complete, flushed temporary file, only while nothing is under the name — else the pass
    /// makes it a conflict),
    /// after a `PROPFIND` of the item without its tag (it must still be a file; its size bounds
    /// the download); the tag recorded is the `GET` answer's, the tag of the bytes it brought.
    /// Runs as a pass (no pass overlaps it); whatever it does not finish — gone or a folder on the
    /// server, a failure, offline — is left to the pass that starts right after it, which
    /// downloads the item or answers the readers waiting for it. Runs on the engine's actor.
    func downloadRequestedFile(_ path: String) async {
        defer { syncNow() }
        guard !isPaused, !isPassRunning, onDemand.downloads.contains(path), isEvictedHere(path),
              let base = journal.entries[path], !base.isFolder, base.isPackage != true, !isPackage(path),
              !packageRules.isPackageName((path as NSString).lastPathComponent) else { return }
        isPassRunning = true
        defer { isPassRunning = false }
        do throws(SyncStepError) {
            let target = try remotePath(path)
            let store = self.store
            let remote = try await onServer { () async throws(RemoteStoreError) -> RemoteItem? in
                if let webDAV = store as? WebDAVStore { try await webDAV.itemWithoutTag(at: target) } else { try await store.item(at: target) }
            }
            guard let remote, !remote.isFolder else { return }
            let (temporary, tag) = try await fetch(path, remote: remote)
            defer { LocalFiles.remove(temporary.path) }
            let local = self.local
            let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
                try local.place(temporary, at: path, expected: nil)
            }
            // Something under the name meanwhile: the pass makes it a conflict.
            guard case .placed(let fingerprint, _) = placement else { return }
            try record(JournalEntry(path: path, isFolder: false, local: fingerprint, remoteTag: tag, fileID: remote.fileID,
                                    state: .synced))
        } catch {
            // Left to the pass that follows (it tries again, or answers the readers with why not).
        }
    }

    // MARK: Pins

    /// Pins `path` (a synced file, package or folder): evicted items inside it are downloaded
    /// now, and none is evicted while pinned — not by the space budget, and a request to evict
    /// one is refused. Saved: survives a restart. Returns `nil`, or why not (not a synced item).
    public func pin(_ path: String) -> String? {
        guard journal.entries[path] != nil else { return "\(path) is not a synced item" }
        if onDemand.pins.insert(path).inserted { saveOnDemand() }
        _ = requestDownload(path)
        syncNow()
        return nil
    }

    /// Unpins `path`: its items may be evicted again (nothing is evicted now). Returns `nil`, or
    /// why not (it is pinned only through a folder above it, which must be unpinned instead).
    public func unpin(_ path: String) -> String? {
        if onDemand.pins.remove(path) != nil {
            saveOnDemand()
            return nil
        }
        if let pin = onDemand.pin(covering: path) { return "\(path) is pinned through \(pin): unpin \(pin) instead" }
        return nil
    }

    /// The pinned paths (sorted).
    public var pinnedPaths: [String] { onDemand.pins.sorted() }

    /// The evicted items asked for and not in place yet (sorted).
    public var requestedDownloads: [String] { onDemand.downloads.sorted() }

    /// Saves ``OnDemandState``; a failure is recorded in the status (the requests still hold in
    /// memory until the agent stops).
    func saveOnDemand() {
        if let problem = onDemand.save(in: configuration.journalFolder) { statusBox.record(problem, path: nil) }
    }

    // MARK: Answers

    /// Answers the requests waiting for `path` with `reason` (``ContainerSyncStatus/refusedRequests``):
    /// a reader waiting for the download fails now with that message. The path itself stays
    /// queued unless the caller drops it.
    func refuseDownloadWaiters(for path: String, reason: String) {
        guard let ids = downloadWaiters.removeValue(forKey: path), !ids.isEmpty else { return }
        refuse(ids, reason: "\(reason) (\(path))")
    }

    /// Answers every waiting download request with `reason`.
    func refuseAllDownloadWaiters(reason: String) {
        for path in downloadWaiters.keys.sorted() { refuseDownloadWaiters(for: path, reason: reason) }
    }

    /// Puts `reason` under each of `ids` in the status (at most ``maximumRefusals`` kept, oldest
    /// dropped first).
    private func refuse(_ ids: [String], reason: String) {
        for id in ids where !refusalOrder.contains(id) { refusalOrder.append(id) }
        let dropped = refusalOrder.count > Self.maximumRefusals ? Array(refusalOrder.prefix(refusalOrder.count - Self.maximumRefusals)) : []
        refusalOrder.removeFirst(dropped.count)
        statusBox.update { status in
            var refused = status.refusedRequests ?? [:]
            for id in ids { refused[id] = reason }
            for id in dropped { refused[id] = nil }
            status.refusedRequests = refused.isEmpty ? nil : refused
        }
    }

    /// How many answered download requests the status keeps.
    static let maximumRefusals = 32

    /// The text of a download that failed because the server cannot be reached.
    static func offlineReason(_ detail: String) -> String {
        "offline: the server cannot be reached (\(detail)); the download starts when it is back"
    }
}
