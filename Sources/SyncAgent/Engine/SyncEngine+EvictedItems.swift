import Foundation
import Glibc
import SystemSupport
import Ubiquity

/// What a pass does with evicted items besides planning nothing for them: the ones asked for
/// (or pinned) are downloaded, and their requests answered; the ones the server deleted lose
/// their placeholder; the ones the server changed get their placeholder's facts updated.
extension SyncEngine {
    /// The evicted items of this pass that must come back: asked for, or inside a pin.
    func wantedDownloads(_ evicted: [String]) -> Set<String> {
        Set(evicted.filter { onDemand.downloads.contains($0) || onDemand.isPinned($0) })
    }

    /// The server changed or deleted evicted items (`evicted`: this pass's, from
    /// ``EvictedItems/paths(known:missingFrom:in:)``):
    ///
    /// - **deleted on the server** → the placeholder is removed and the item forgotten, as a
    ///   synced file deleted on the server is deleted here. Not while the plan holds deletions,
    ///   treats the server as replaced, or the server has an item moved aside (another device
    ///   replacing or deleting a folder: a missing item may be back an instant later); when the
    ///   removals alone are a mass deletion (``SyncGuards``), they are held like deletions of files
    ///   (added to `plan`'s ``SyncPlan/heldDeletions``) until approved.
    /// - **changed on the server** → the placeholder is rewritten with the server's size, date
    ///   and tag (still evicted: queries show the current size). Each tag is looked at once.
    ///
    /// A request waiting for a deleted item is answered ("deleted on the server") and dropped.
    func settleEvictedItems(_ evicted: [String], listing: RemoteListing, plan: inout SyncPlan, knownItems: Int) async {
        guard !evicted.isEmpty, !plan.serverReplaced else { return }
        let gone = evicted.filter { listing.items[$0] == nil }
        if !gone.isEmpty {
            let localDeletions = plan.steps.filter { if case .deleteLocal = $0 { true } else { false } }.count
            let approved = Set(gone).isSubset(of: approvedDeletions)
            if !plan.heldDeletions.isEmpty
                || (!approved && planner.isMassDeletion(count: gone.count + localDeletions, of: knownItems)) {
                plan.heldDeletions = Array(Set(plan.heldDeletions).union(gone)).sorted()
            } else if (try? await serverHasItemsAside()) == false {
                await removePlaceholders(of: gone)
            }
        }
        await updatePlaceholders(evicted.filter { !gone.contains($0) }, listing: listing)
    }

    /// Removes the placeholders of evicted items the server deleted, and forgets them.
    private func removePlaceholders(of paths: [String]) async {
        for path in paths {
            if FileManager.default.fileExists(atPath: local.url(path).path) { continue }  // back meanwhile: synced as new
            do {
                try ItemPlaceholder.remove(forItemAt: local.url(path))
                try forget(path)
            } catch {
                statusBox.record("cannot remove the placeholder of an item deleted on the server: \(error)", path: path)
                continue
            }
            approvedDeletions.remove(path)
            checkedEvictedTags[path] = nil
            if onDemand.downloads.remove(path) != nil { saveOnDemand() }
            refuseDownloadWaiters(for: path, reason: "deleted on the server: there is nothing to download")
        }
    }

    /// Rewrites the placeholders of evicted items whose server copy changed since they were
    /// written (size, modification date, tag), so queries show the current facts.
    private func updatePlaceholders(_ paths: [String], listing: RemoteListing) async {
        var changed: [(String, RemoteItem)] = []
        for path in paths {
            guard let remote = listing.items[path], let tag = remote.tag?.value, checkedEvictedTags[path] != tag else { continue }
            // Unchanged since it was evicted: its placeholder was written with this tag.
            if checkedEvictedTags[path] == nil, journal.entries[path]?.remoteTag?.value == tag {
                checkedEvictedTags[path] = tag
                continue
            }
            changed.append((path, remote))
        }
        guard !changed.isEmpty else { return }
        let container = configuration.containerURL, candidates = changed
        let staging = transferFile("placeholders")
        let results = try? await offThePool { () throws(SyncStepError) -> [(String, String, String?)] in
            defer { LocalFiles.remove(staging.path) }
            return candidates.map { path, remote in
                let url = container.appending(path: path, directoryHint: .notDirectory)
                let tag = remote.tag?.value ?? ""
                guard let old = (try? ItemPlaceholder.read(forItemAt: url)) ?? nil else { return (path, tag, nil) }
                let size = remote.size ?? old.size
                let modified = remote.modified ?? old.modificationDate
                guard old.remoteTag != tag || old.size != size else { return (path, tag, nil) }
                let updated = ItemPlaceholder(name: old.name, size: size, modificationDate: modified,
                                              creationDate: old.creationDate, isPackage: old.isPackage, remoteTag: tag)
                // The item itself is not there: a placeholder is replaced atomically (readers see
                // the old one or the new one), and a file put under the real name meanwhile wins.
                if FileManager.default.fileExists(atPath: url.path) { return (path, tag, nil) }
                return (path, tag, Self.replacePlaceholder(of: url, with: updated, staging: staging))
            }
        }
        for (path, tag, problem) in results ?? [] {
            if let problem {
                statusBox.record("cannot update the placeholder of an item changed on the server: \(problem)", path: path)
            } else {
                checkedEvictedTags[path] = tag
            }
        }
    }

    /// Replaces the placeholder of the item at `url` by `placeholder` in one rename: written
    /// (durably, with its attribute) beside a stand-in item in `staging` — a folder in the agent's
    /// transfers folder, same file system — then renamed over the old placeholder, and the folder
    /// flushed. Readers see the old placeholder or the new one. Returns why not, or `nil`.
    static func replacePlaceholder(of url: URL, with placeholder: ItemPlaceholder, staging: URL) -> String? {
        guard let target = ItemPlaceholder.placeholderURL(forItemAt: url) else { return "the name is too long for a placeholder" }
        do {
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            let standIn = staging.appending(path: url.lastPathComponent)
            try? ItemPlaceholder.remove(forItemAt: standIn)
            try placeholder.write(besideItemAt: standIn)
            guard let written = ItemPlaceholder.placeholderURL(forItemAt: standIn) else { return "the name is too long for a placeholder" }
            guard rename(PathBytes.path(of: written), PathBytes.path(of: target)) == 0 else { return Errno.current.message }
            try? LocalFiles.flush(PathBytes.path(of: target.deletingLastPathComponent()))
            return nil
        } catch {
            return error.localizedDescription
        }
    }

    /// After a pass's steps: each wanted item that is in place loses its placeholder (the file
    /// is in place first, so a crash in between leaves both, and the file wins) and its request;
    /// the requests for one still missing are answered when it cannot come now — offline, a
    /// failed step, the server has a folder there — and kept queued (a deferred step is not a
    /// failure: it comes back in a moment).
    func finishRequestedDownloads(_ wanted: Set<String>, report: SyncPassReport, listing: RemoteListing) {
        var changed = false
        for path in onDemand.downloads.union(wanted).sorted() {
            let url = local.url(path)
            if FileManager.default.fileExists(atPath: url.path) {
                try? ItemPlaceholder.remove(forItemAt: url)
                if onDemand.downloads.remove(path) != nil { changed = true }
                downloadWaiters[path] = nil
                checkedEvictedTags[path] = nil
                continue
            }
            guard wanted.contains(path) else {
                // Neither here nor evicted (deleted here by hand, or by the pass): nothing to wait for.
                if !isEvictedHere(path), journal.entries[path] == nil {
                    onDemand.downloads.remove(path)
                    changed = true
                    refuseDownloadWaiters(for: path, reason: "no longer a synced item")
                }
                continue
            }
            if let failure = report.failed.first(where: { $0.step.path == path })?.error {
                if case .deferred = failure { continue }
                refuseDownloadWaiters(for: path, reason: failure.isTransient ? Self.offlineReason(failure.description) : failure.description)
            } else if report.wentOffline {
                refuseDownloadWaiters(for: path, reason: Self.offlineReason(offlineDetail()))
            } else if listing.items[path] == nil {
                refuseDownloadWaiters(for: path, reason: "not on the server any more (its deletion here waits: see `clouddocs agent status`)")
            } else if let remote = listing.items[path], remote.isFolder, !isPackage(path) {
                refuseDownloadWaiters(for: path, reason: "a folder on the server now, not the evicted item")
            }
        }
        if changed { saveOnDemand() }
    }

    /// Why the engine is offline, from its status.
    func offlineDetail() -> String {
        if case .offline(let reason, _) = statusBox.current.state { return reason }
        return "the server did not answer"
    }
}
