import CloudDocuments
import Foundation
import Ubiquity

extension SyncEngine {
    /// Evicts the synced file at `path` (container-relative; files on demand): its placeholder
    /// replaces it (``ItemPlaceholder``) and its blocks are freed; the server keeps it. Returns
    /// `nil` when done, or why it was refused — the file was never synced, has changes not yet
    /// uploaded (an open document with unsaved changes saves first, and then has them), is in
    /// conflict, is a folder or a package (not evicted yet). Runs on the engine's actor; the
    /// coordinated write runs off the cooperative pool.
    public func evict(_ path: String) async -> String? {
        guard let base = journal.entries[path] else { return "\(path) is not synced yet: only uploaded items can be evicted" }
        if base.isFolder || base.isPackage == true { return "\(path) is a folder or a package: only files can be evicted for now" }
        if base.state == .inConflict || journal.conflicts.values.contains(where: { $0.itemPath == path })
            || UbiquitousItemStatus.hasUnresolvedConflicts(itemAt: local.url(path)) {
            return "\(path) has unresolved conflict versions: resolve them first"
        }
        let local = self.local, expected = base.local, tag = base.remoteTag?.value
        do throws(SyncStepError) {
            let outcome = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Eviction in
                try local.evict(path, expected: expected, remoteTag: tag)
            }
            switch outcome {
            case .evicted:
                downloadRequests.remove(path)
                return nil
            case .notUploaded: return "\(path) has changes that are not uploaded yet: try again once it is uploaded"
            case .missing: return "\(path) is not here (already evicted, or deleted)"
            }
        } catch {
            return error.description
        }
    }

    /// Asks for the evicted file at `path` to be downloaded: the next pass (started now) brings
    /// it back through a coordinated write and then removes its placeholder. Returns `nil` when
    /// queued (or when the file is already here), or why not. Runs on the engine's actor.
    public func requestDownload(_ path: String) -> String? {
        guard journal.entries[path] != nil else { return "\(path) is not a synced item" }
        let url = local.url(path)
        if FileManager.default.fileExists(atPath: url.path) { return nil }
        guard (try? ItemPlaceholder.read(forItemAt: url)) ?? nil != nil else { return "\(path) is not evicted" }
        downloadRequests.insert(path)
        syncNow()
        return nil
    }

    /// After a pass: the requested downloads that landed lose their placeholder (the file is in
    /// place first, so a crash in between leaves both, and the file wins).
    func finishRequestedDownloads() {
        for path in downloadRequests {
            let url = local.url(path)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            try? ItemPlaceholder.remove(forItemAt: url)
            downloadRequests.remove(path)
        }
    }
}
