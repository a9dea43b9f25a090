import CloudDocuments
import Foundation

/// Package documents (folders such as `Report.pages/`) sync as **one unit** (see
/// Docs/SyncAgent.md, "Package documents"):
/// - the planner sees a package as one item (``PackageView``), never its inner files;
/// - **upload**: a coordinated read of the whole package copies it to a snapshot; the snapshot is
///   uploaded into a private staging folder at the root of the store; the server's package is
///   moved aside and verified to be what the plan saw; then the staging folder is renamed under
///   the real name (`MOVE`, atomic on the server's file system) and the old one deleted;
/// - **download**: every inner file is fetched into a temporary folder on the container's file
///   system, then the package is listed again — only when nothing changed meanwhile (a
///   consistent package) does it go in place, by one coordinated write and a rename swap;
/// - **conflict**: both sides changed → the server's package stays current and the local one
///   becomes one conflict version of the package (on every device, through the conflict area).
extension SyncEngine {
    /// Whether the item at `path` is synced as a package in this pass.
    func isPackage(_ path: String) -> Bool { packageView.packages.contains(path) }

    // MARK: Server trees

    /// The items below the folder `root`, relative to it (one `Depth: 1` listing per folder);
    /// `nil` when the folder is missing.
    func listTree(_ root: RemotePath) async throws(SyncStepError) -> [(relative: String, item: RemoteItem)]? {
        var found: [(String, RemoteItem)] = []
        var pending: [RemotePath] = [root]
        while let folder = pending.popLast() {
            let children: [RemoteItem]
            do {
                children = try await store.list(folder)
            } catch .notFound {
                if folder == root { return nil }
                throw .remote(.preconditionFailed(root))  // changed while listed
            } catch {
                throw .remote(error)
            }
            for item in children where item.path.parent == folder {
                if SyncExclusions.excludes(item.path.name) { continue }
                let relative = item.path.components.dropFirst(root.components.count).joined(separator: "/")
                found.append((relative, item))
                if found.count > RemoteLister.maximumItems { throw .remote(.malformedResponse("a package of more than \(RemoteLister.maximumItems) items")) }
                if item.isFolder { pending.append(item.path) }
            }
        }
        return found
    }

    /// Uploads the local tree at `folder` into the new server folder `target` (made here),
    /// every file with `If-None-Match: *`.
    func uploadTree(_ folder: URL, to target: RemotePath, path: String) async throws(SyncStepError) {
        let root = folder.path
        guard let inner = PackageTree.items(of: root) else { throw .local(path: path, reason: "cannot read the package snapshot") }
        let total = inner.reduce(Int64(0)) { $0 + ($1.item.isFolder ? 0 : $1.item.fingerprint.size) }
        let store = self.store, box = statusBox
        box.progress(path: path, isUpload: true, done: 0, total: total)
        defer { box.finishTransfer(path: path) }
        try await onServer { () async throws(RemoteStoreError) in try await store.makeFolder(target) }
        var done: Int64 = 0
        // Parents before children: sorted paths put a folder before what is inside it.
        for (relative, item) in inner.sorted(by: { $0.relative < $1.relative }) {
            guard let remote = RemotePath(components: target.components + relative.split(separator: "/").map(String.init)) else {
                throw .local(path: path, reason: "\(relative): not a valid name for the server")
            }
            if item.isFolder {
                try await onServer { () async throws(RemoteStoreError) in try await store.makeFolder(remote) }
                continue
            }
            let before = done
            _ = try await onServer { () async throws(RemoteStoreError) -> RemoteTag? in
                try await store.upload(URL(filePath: root + "/" + relative), to: remote, condition: .mustNotExist) { sent, _ in
                    box.progress(path: path, isUpload: true, done: before + sent, total: total)
                }
            }
            done += item.fingerprint.size
        }
    }

    /// Registers a new staging folder at the root of the store (journalled before it is made).
    func beginStaging(for path: String) throws(SyncStepError) -> RemotePath {
        guard let staging = RemotePath.root.appending(Self.stagingPrefix + UUID().uuidString) else {
            throw .local(path: path, reason: "no private name on the server")
        }
        do { try journal.putPendingMove(JournalPendingMove(privatePath: staging.description, realPath: path, isStaging: true)) } catch {
            throw .journal(error)
        }
        return staging
    }

    /// Fetches the server's package at `path` (as the plan saw it, `remote`) into a new temporary
    /// folder, flushed. Only a consistent package is returned: every file's tag must be the
    /// listing's, and a listing after the last file must give the same package tag; otherwise
    /// the package changed while it was read and the step is deferred to the next pass.
    func fetchPackage(_ path: String, remote: RemoteItem) async throws(SyncStepError) -> URL {
        let root = try remotePath(path)
        guard let inner = packageView.remoteInner[path] else { throw .remote(.notFound(root)) }
        let temporary = transferFile("package")
        try PackageTree.makeFolder(temporary.path, path: path)
        let store = self.store, box = statusBox
        let total = inner.reduce(Int64(0)) { $0 + ($1.item.size ?? 0) }
        box.progress(path: path, isUpload: false, done: 0, total: total)
        defer { box.finishTransfer(path: path) }
        do throws(SyncStepError) {
            var done: Int64 = 0
            for (relative, item) in inner.sorted(by: { $0.relative < $1.relative }) {
                guard RemotePath(relative) != nil else { throw .local(path: path, reason: "\(relative): not a valid local name") }
                let local = temporary.path + "/" + relative
                if item.isFolder {
                    try PackageTree.makeFolder(local, path: path)
                    continue
                }
                let before = done
                let tag = try await onServer { () async throws(RemoteStoreError) -> RemoteTag? in
                    try await store.download(item.path, to: URL(filePath: local), listedSize: item.size) { received, _ in
                        box.progress(path: path, isUpload: false, done: before + received, total: total)
                    }
                }
                if let tag, !SyncPlanner.isSame(tag, item.tag) {
                    throw .deferred(path: path, reason: "the package changed on the server while it was downloaded")
                }
                done += item.size ?? 0
            }
            guard let now = try await listTree(root), PackageFingerprint.remoteTag(inner: now) == remote.tag else {
                throw .deferred(path: path, reason: "the package changed on the server while it was downloaded")
            }
            try PackageTree.flush(temporary.path, path: path)
            return temporary
        } catch {
            PackageTree.remove(temporary.path)
            throw error
        }
    }

    // MARK: Steps

    /// Upload of a package (see the type's comment). A package the server changed since the plan
    /// is left (412) for the next pass, which plans a conflict.
    func uploadPackage(_ path: String, remote: RemoteItem?, base: JournalEntry?) async throws(SyncStepError) {
        let target = try remotePath(path)
        if let remote, remote.isFolder == false, packageView.remoteInner[path] == nil {
            throw .local(path: path, reason: "a package here and a file on the server: left alone until one is renamed")
        }
        let snapshot = transferFile("package-upload")
        defer { PackageTree.remove(snapshot.path) }
        let local = self.local
        guard let fingerprint = try await offThePool({ () throws(SyncStepError) -> LocalFingerprint? in
            try local.snapshotPackage(path, to: snapshot)
        }) else { return }  // deleted meanwhile: the next pass plans it
        let staging = try beginStaging(for: path)
        do throws(SyncStepError) {
            try await uploadTree(snapshot, to: staging, path: path)
            // Nobody else writes in the private staging folder: these tags are surely ours.
            guard let staged = try await listTree(staging) else { throw .remote(.notFound(staging)) }
            let stagedTag = PackageFingerprint.remoteTag(inner: staged)
            try await putPackageInPlace(staging, at: target, expected: remote)
            try await discardPrivate(staging)  // recorded as done (the folder is gone: moved)
            let placed = try await listTree(target)
            let tag = placed.map { PackageFingerprint.remoteTag(inner: $0) }
            // Someone else's write after ours: record ours, so that the next pass sees theirs.
            let recorded = tag == stagedTag ? tag : stagedTag
            let folder = try await onServer { () async throws(RemoteStoreError) -> RemoteItem? in try await store.item(at: target) }
            try recordPackage(path, local: fingerprint, tag: recorded, fileID: folder?.fileID ?? remote?.fileID,
                              state: base?.state ?? .synced)
        } catch {
            try? await discardPrivate(staging)
            throw error
        }
        await shareLocalConflictVersions(of: path)
    }

    /// Renames the complete `staging` folder to `target`: when the plan saw nothing there, only
    /// if nothing appeared (`Overwrite: F`); otherwise the server's package is moved aside,
    /// verified to be `expected` (else put back: 412), and deleted after the rename.
    func putPackageInPlace(_ staging: RemotePath, at target: RemotePath, expected: RemoteItem?) async throws(SyncStepError) {
        guard let expected else {
            try await onServer { () async throws(RemoteStoreError) in
                try await store.move(staging, to: target, condition: .unconditional)
            }
            return
        }
        guard let aside = try await moveAside(target) else { throw .remote(.preconditionFailed(target)) }
        let seen = try await listTree(aside)
        guard let seen, await isUnchanged(seen, target.description, expected) else {
            try await restoreAside(aside, to: target)
            throw .remote(.preconditionFailed(target))
        }
        try markVerified(aside, real: target)
        do {
            try await store.move(staging, to: target, condition: .unconditional)
        } catch {
            try await restoreAside(aside, to: target)
            throw .remote(error)
        }
        try await discardPrivate(aside)
    }

    /// Whether the tree `seen` of a package moved aside is the package at `path` the plan saw
    /// (`expected`): the same package tag; or — on a server whose tags may name the path and so
    /// change with the rename, and which is in safe mode anyway (WsgiDAV:
    /// ``RemoteCapabilities/tagChangesOnEveryWrite`` is false) — the same items with the same
    /// kinds, sizes and modification times.
    func isUnchanged(_ seen: [(relative: String, item: RemoteItem)], _ path: String, _ expected: RemoteItem) async -> Bool {
        if PackageFingerprint.remoteTag(inner: seen) == expected.tag { return true }
        guard await !store.capabilities.tagChangesOnEveryWrite, let planned = packageView.remoteInner[path],
              planned.count == seen.count else { return false }
        let before = Dictionary(planned.map { ($0.relative, $0.item) }, uniquingKeysWith: { first, _ in first })
        return seen.allSatisfy { relative, item in
            guard let old = before[relative], old.isFolder == item.isFolder else { return false }
            return item.isFolder || (item.size == old.size && item.modified != nil && item.modified == old.modified)
        }
    }

    /// Download of a package: fetched whole and consistent, then put in place in one coordinated
    /// write. Edited here meanwhile: a conflict of the package.
    func downloadPackage(_ path: String, remote: RemoteItem, base: JournalEntry?,
                         newConflicts: inout Set<String>) async throws(SyncStepError) {
        let temporary = try await fetchPackage(path, remote: remote)
        defer { PackageTree.remove(temporary.path) }
        let local = self.local
        let expected = base?.isPackage == true ? base?.local : nil
        let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
            try local.placePackage(temporary, at: path, expected: expected)
        }
        switch placement {
        case .placed(let fingerprint, _):
            try recordPackage(path, local: fingerprint, tag: remote.tag, fileID: remote.fileID, state: base?.state ?? .synced)
        case .changedLocally:
            try await resolvePackageConflict(path, remote: remote, downloaded: temporary, base: base, newConflicts: &newConflicts)
        }
    }

    /// Both sides changed the package: identical trees are recorded; otherwise the local package
    /// goes to the conflict area (staged, then renamed there whole), then — in one coordinated
    /// write — becomes one unresolved conflict version of the package, and the server's package
    /// is put in place.
    func resolvePackageConflict(_ path: String, remote: RemoteItem, downloaded: URL?, base: JournalEntry?,
                                newConflicts: inout Set<String>) async throws(SyncStepError) {
        guard packageView.remoteInner[path] != nil else {
            throw .local(path: path, reason: "a package on one side and a file on the other: left alone until one is renamed")
        }
        let temporary = if let downloaded { downloaded } else { try await fetchPackage(path, remote: remote) }
        let snapshot = transferFile("package-conflict")
        defer {
            PackageTree.remove(temporary.path)
            PackageTree.remove(snapshot.path)
        }
        let local = self.local
        guard let fingerprint = try await offThePool({ () throws(SyncStepError) -> LocalFingerprint? in
            try local.snapshotPackage(path, to: snapshot)
        }) else {
            let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
                try local.placePackage(temporary, at: path, expected: nil)
            }
            if case .placed(let placed, _) = placement {
                try recordPackage(path, local: placed, tag: remote.tag, fileID: remote.fileID, state: .synced)
            }
            return
        }
        if PackageTree.haveSameContents(snapshot.path, temporary.path) {
            try recordPackage(path, local: fingerprint, tag: remote.tag, fileID: remote.fileID, state: base?.state ?? .synced)
            return
        }
        let conflictPath = try conflictAreaPath(path, remoteTag: remote.tag, local: fingerprint)
        try beginConflict(path, at: conflictPath)
        try await uploadPackageToConflictArea(path, snapshot: snapshot, at: conflictPath)
        let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
            try local.placePackage(temporary, at: path, expected: fingerprint, conflictContents: snapshot)
        }
        switch placement {
        case .placed(let placed, let versionID):
            try recordPackage(path, local: placed, tag: remote.tag, fileID: remote.fileID, state: .inConflict)
            try finishConflict(path, at: conflictPath, versionID: versionID)
            newConflicts.insert(conflictPath.description)
        case .changedLocally:
            try? await withdrawConflict(path, at: conflictPath)
        }
    }

    /// Uploads a package conflict version whole: staged, then renamed to `target` in the conflict
    /// area (so other devices never adopt half of it). Already there (a retry after a crash):
    /// done.
    func uploadPackageToConflictArea(_ path: String, snapshot: URL, at target: RemotePath) async throws(SyncStepError) {
        try await makeFolders(of: target)
        let staging = try beginStaging(for: target.description)
        do throws(SyncStepError) {
            try await uploadTree(snapshot, to: staging, path: path)
            do {
                try await store.move(staging, to: target, condition: .unconditional)
            } catch .preconditionFailed {
                // The same version (its name comes from the same bytes) is there already.
            } catch {
                throw .remote(error)
            }
            try await discardPrivate(staging)
        } catch {
            try? await discardPrivate(staging)
            throw error
        }
    }

    /// Deletes the server's package, deleted here: moved aside, verified to be what the plan saw
    /// (else put back: the next pass downloads the other device's edit), then deleted.
    func deletePackageRemote(_ path: String, remote: RemoteItem?) async throws(SyncStepError) {
        guard let remote else { try forget(path); return }
        let target = try remotePath(path)
        guard let aside = try await moveAside(target) else { try forget(path); return }
        let seen = try await listTree(aside)
        guard let seen, await isUnchanged(seen, path, remote) else {
            try await restoreAside(aside, to: target)
            throw .remote(.preconditionFailed(target))
        }
        try markVerified(aside, real: target)
        try await discardPrivate(aside)
        try forget(path)
    }

    /// Deletes the local package, deleted on the server, while it is unchanged here — after one
    /// more look that it is really gone (a package being replaced is missing for an instant).
    func deletePackageLocal(_ path: String, base: JournalEntry?) async throws(SyncStepError) {
        let target = try remotePath(path)
        if try await onServer({ () async throws(RemoteStoreError) -> RemoteItem? in try await store.item(at: target) }) != nil {
            return  // back already: the next pass compares it
        }
        let local = self.local
        let expected = base?.local
        let removing = transferFile("package-removed")
        let gone = try await offThePool { () throws(SyncStepError) -> Bool in
            try local.deletePackage(path, expected: expected, removing: removing)
        }
        if gone { try forget(path) }
    }

    /// Records a package as synced (one entry; the inner paths are forgotten).
    func recordPackage(_ path: String, local: LocalFingerprint, tag: RemoteTag?, fileID: String?,
                       state: JournalItemState) throws(SyncStepError) {
        let prefix = path + "/"
        do {
            for key in journal.entries.keys where key.hasPrefix(prefix) { try journal.remove(path: key) }
        } catch {
            throw .journal(error)
        }
        try record(JournalEntry(path: path, isFolder: false, local: local, remoteTag: tag, fileID: fileID, state: state, isPackage: true))
    }
}
