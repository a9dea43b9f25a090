import CloudDocuments
import Foundation

extension SyncEngine {
    /// Carries conflict versions between devices through the server's conflict area:
    /// - a conflict file another device put there becomes an unresolved conflict version here
    ///   (when the item exists here; otherwise a later pass does it);
    /// - a conflict version resolved or removed here has its file deleted there;
    /// - a conflict file deleted there (resolved on another device) resolves the version here.
    /// Failures are recorded and retried by the next pass. `skipping`: conflicts made this pass.
    func syncConflictArea(_ listing: RemoteListing, skipping: Set<String>) async {
        let known = journal.conflicts
        for (remotePath, item) in listing.conflictFiles.sorted(by: { $0.key < $1.key }) where known[remotePath] == nil {
            do { try await adoptConflict(remotePath, item: item) } catch {
                statusBox.record("conflict version from another device: \(error.description)", path: remotePath)
            }
        }
        for (remotePath, conflict) in known.sorted(by: { $0.key < $1.key }) where !skipping.contains(remotePath) {
            do { try await propagateResolution(conflict, remote: listing.conflictFiles[remotePath]) } catch {
                statusBox.record("conflict version: \(error.description)", path: conflict.itemPath)
            }
        }
    }

    /// Shares the unresolved conflict versions of the item at `path` that the agent does not know
    /// yet — those an open document made when it saved over bytes the agent had downloaded — by
    /// uploading them to the conflict area, so the other devices get them too. Called after an
    /// upload of the item (the moment such a save reaches the agent). Failures are recorded and
    /// left for the next upload.
    func shareLocalConflictVersions(of path: String) async {
        let target = local.url(path)
        // Most items never had a version: answer that without asking the store about each one.
        if recordedVersionPaths == nil { recordedVersionPaths = FileVersion.recordedItemPaths() }
        guard FileVersion.mayHaveStoredVersions(ofItemAt: target, recordedPaths: recordedVersionPaths ?? []) else { return }
        let containerPath = configuration.containerURL.standardizedFileURL.path + "/"
        let known = Set(journal.conflicts.values.compactMap(\.versionID))
        let versions = (try? FileVersion.unresolvedConflictVersionsOfItem(at: target)) ?? []
        for version in versions where !known.contains(version.persistentIdentifier.rawValue) {
            // Sync tools' conflict copies are files in the container, synced as they are.
            guard !version.url.standardizedFileURL.path.hasPrefix(containerPath) else { continue }
            do {
                let snapshot = transferFile("version")
                defer { LocalFiles.remove(snapshot.path) }
                do { try FileManager.default.copyItem(at: version.url, to: snapshot) } catch {
                    throw SyncStepError.local(path: path, reason: "cannot read a conflict version: \(error.localizedDescription)")
                }
                let remotePath = try await uploadToConflictArea(path, snapshot: snapshot)
                try journal.putConflict(JournalConflict(itemPath: path, remotePath: remotePath.description,
                                                        versionID: version.persistentIdentifier.rawValue))
            } catch let error as SyncStepError {
                statusBox.record("conflict version not shared: \(error.description)", path: path)
            } catch {
                statusBox.record("conflict version not shared: \(error)", path: path)
            }
        }
    }

    /// The item path of a conflict-area file (`.clouddocs-conflicts/a/b.txt/NAME` → `a/b.txt`).
    static func itemPath(ofConflictFile remotePath: String) -> String? {
        let components = remotePath.split(separator: "/").map(String.init)
        guard components.count >= 3, components.first == SyncExclusions.conflictArea else { return nil }
        return components.dropFirst().dropLast().joined(separator: "/")
    }

    private func adoptConflict(_ remotePath: String, item: RemoteItem) async throws(SyncStepError) {
        guard let itemPath = Self.itemPath(ofConflictFile: remotePath), journal.entries[itemPath]?.isFolder == false else { return }
        let target = local.url(itemPath)
        guard LocalScanner.fingerprint(target.path) != nil else { return }
        let (temporary, _) = try await fetch(remotePath, remote: item)
        defer { LocalFiles.remove(temporary.path) }
        let local = self.local
        let versionID = try await offThePool { () throws(SyncStepError) -> String in
            try local.checkFolders(of: itemPath)
            do {
                return try FileVersion.addSyncConflictVersion(ofItemAt: target, withContentsOf: temporary, byMoving: true,
                                                              savingComputer: nil, coordinator: nil).persistentIdentifier.rawValue
            } catch {
                throw .local(path: itemPath, reason: "cannot add the conflict version: \(error)")
            }
        }
        do {
            try journal.putConflict(JournalConflict(itemPath: itemPath, remotePath: remotePath, versionID: versionID))
        } catch {
            throw .journal(error)
        }
    }

    private func propagateResolution(_ conflict: JournalConflict, remote: RemoteItem?) async throws(SyncStepError) {
        let target = local.url(conflict.itemPath)
        let version: FileVersion? = conflict.versionID.flatMap { identifier in
            try? FileVersion.version(itemAt: target, forPersistentIdentifier: FileVersion.PersistentIdentifier(rawValue: identifier))
        }
        let resolvedHere = version.map { $0.isResolved } ?? true
        guard let remote else {
            // Resolved on another device: resolve here too.
            if let version, !version.isResolved {
                do { try await offThePool { () throws(SyncStepError) in
                    do { try version.resolve() } catch { throw .local(path: conflict.itemPath, reason: "cannot resolve: \(error)") }
                } }
            }
            try forgetConflict(conflict)
            return
        }
        guard resolvedHere else { return }
        let path = try remotePath(conflict.remotePath)
        let condition: RemoteWriteCondition = remote.tag.map { $0.isWeak ? .unconditional : .mustMatch($0) } ?? .unconditional
        let store = self.store
        do {
            try await store.delete(path, condition: condition)
        } catch .notFound {
        } catch {
            throw .remote(error)
        }
        try forgetConflict(conflict)
    }

    private func forgetConflict(_ conflict: JournalConflict) throws(SyncStepError) {
        do {
            try journal.removeConflict(remotePath: conflict.remotePath)
            if journal.conflicts.values.allSatisfy({ $0.itemPath != conflict.itemPath }),
               var entry = journal.entries[conflict.itemPath], entry.state == .inConflict {
                entry.state = .synced
                try journal.put(entry)
            }
        } catch {
            throw .journal(error)
        }
    }
}
