import CloudDocuments
import Foundation

/// One conflict version in the server's conflict area: a file (`.clouddocs-conflicts/a/b.txt/NAME`)
/// or a package's whole folder (`.clouddocs-conflicts/a/Doc.pkg/NAME.pkg/…`).
struct ConflictAreaUnit: Sendable {
    /// The container-relative path of the item it is a version of.
    var itemPath: String
    /// The file, or a folder item standing for the package version.
    var item: RemoteItem
    /// For a package version: its files, relative to its folder (`nil` for a file).
    var packageFiles: [(relative: String, item: RemoteItem)]?
}

extension SyncEngine {
    /// Carries conflict versions between devices through the server's conflict area:
    /// - a conflict version another device put there becomes an unresolved conflict version here
    ///   (when the item exists here; otherwise a later pass does it);
    /// - a conflict version resolved or removed here has its file (or folder) deleted there;
    /// - one deleted there (resolved on another device) resolves the version here.
    /// Failures are recorded and retried by the next pass. `skipping`: conflicts made this pass.
    ///
    /// Idempotent across `kill -9`: a conflict is journalled (without its local version) before
    /// its bytes go anywhere, and a journalled conflict without a local version is completed by
    /// looking for an unresolved version with the same bytes before adding one — so no crash
    /// window makes a second copy of a version.
    func syncConflictArea(_ listing: RemoteListing, skipping: Set<String>) async {
        let units = conflictUnits(listing)
        let known = journal.conflicts
        for (remotePath, unit) in units.sorted(by: { $0.key < $1.key }) where known[remotePath] == nil {
            do { try await adoptConflict(remotePath, unit: unit) } catch {
                statusBox.record("conflict version from another device: \(error.description)", path: remotePath)
            }
        }
        for (remotePath, conflict) in known.sorted(by: { $0.key < $1.key }) where !skipping.contains(remotePath) {
            do {
                if conflict.versionID == nil, let unit = units[remotePath] {
                    try await adoptConflict(remotePath, unit: unit)
                } else {
                    try await propagateResolution(conflict, remote: units[remotePath]?.item)
                }
            } catch {
                statusBox.record("conflict version: \(error.description)", path: conflict.itemPath)
            }
        }
    }

    /// The conflict area's versions by remote path: files, and package versions grouped into one
    /// unit each (the first package name below the area ends the item's path; the next name is
    /// the version's folder).
    func conflictUnits(_ listing: RemoteListing) -> [String: ConflictAreaUnit] {
        var units: [String: ConflictAreaUnit] = [:]
        for (remotePath, item) in listing.conflictFiles {
            let components = remotePath.split(separator: "/").map(String.init)
            guard components.count >= 3, components.first == SyncExclusions.conflictArea else { continue }
            if let index = components.indices.dropFirst().first(where: { packageRules.isPackageName(components[$0]) }),
               index + 2 < components.count {
                let unitPath = components[...(index + 1)].joined(separator: "/")
                guard let unitRemote = RemotePath(unitPath) else { continue }
                let relative = components[(index + 2)...].joined(separator: "/")
                var unit = units[unitPath] ?? ConflictAreaUnit(
                    itemPath: components[1...index].joined(separator: "/"),
                    item: RemoteItem(path: unitRemote, isFolder: true, tag: nil, size: nil, modified: nil), packageFiles: [])
                unit.packageFiles?.append((relative, item))
                units[unitPath] = unit
            } else if let itemPath = Self.itemPath(ofConflictFile: remotePath) {
                units[remotePath] = ConflictAreaUnit(itemPath: itemPath, item: item, packageFiles: nil)
            }
        }
        return units
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
                defer { PackageTree.remove(snapshot.path) }
                do { try FileManager.default.copyItem(at: version.url, to: snapshot) } catch {
                    throw SyncStepError.local(path: path, reason: "cannot read a conflict version: \(error.localizedDescription)")
                }
                let versionID = version.persistentIdentifier.rawValue
                let isFolder = PackageTree.items(of: snapshot.path) != nil
                let remotePath = try conflictAreaPath(path, seed: "version " + versionID)
                try beginConflict(path, at: remotePath)
                if isFolder {
                    try await uploadPackageToConflictArea(path, snapshot: snapshot, at: remotePath)
                } else {
                    try await uploadToConflictArea(path, snapshot: snapshot, at: remotePath)
                }
                try finishConflict(path, at: remotePath, versionID: versionID)
            } catch let error as SyncStepError {
                statusBox.record("conflict version not shared: \(error.description)", path: path)
            } catch {
                statusBox.record("conflict version not shared: \(error)", path: path)
            }
        }
    }

    // MARK: Conflict records

    /// The conflict-area path of the conflict of `path` between the server's `remoteTag` and the
    /// local bytes `local`: the same for the same pair, so a step retried after a crash reuses it.
    func conflictAreaPath(_ path: String, remoteTag: RemoteTag?, local: LocalFingerprint) throws(SyncStepError) -> RemotePath {
        try conflictAreaPath(path, seed: "\(remoteTag?.value ?? "-") \(local.size) \(local.modifiedNanoseconds) "
            + "\(local.inode) \(local.changedNanoseconds)")
    }

    /// `.clouddocs-conflicts/<path>/<hash of path and seed>.<extension>`.
    func conflictAreaPath(_ path: String, seed: String) throws(SyncStepError) -> RemotePath {
        let item = try remotePath(path)
        var first = PackageFingerprint.FNV1a(), second = PackageFingerprint.FNV1a()
        first.add(path)
        first.add(seed)
        second.add(seed)
        second.add(path)
        let digits = String(first.value, radix: 16) + String(second.value, radix: 16)
        let suffix = item.name.contains(".") ? "." + (item.name.split(separator: ".").last.map(String.init) ?? "") : ""
        guard let area = RemotePath.root.appending(SyncExclusions.conflictArea),
              let folder = RemotePath(components: area.components + item.components),
              let target = folder.appending("conflict-" + digits + suffix) else {
            throw .local(path: path, reason: "no conflict-area name for it")
        }
        return target
    }

    /// Journals a conflict about to be made (no local version yet), unless it is journalled
    /// already. Its completion is left alone by this pass's ``syncConflictArea(_:skipping:)``.
    func beginConflict(_ path: String, at remotePath: RemotePath) throws(SyncStepError) {
        conflictsBegunThisPass.insert(remotePath.description)
        guard journal.conflicts[remotePath.description] == nil else { return }
        do { try journal.putConflict(JournalConflict(itemPath: path, remotePath: remotePath.description, versionID: nil)) } catch {
            throw .journal(error)
        }
    }

    /// Journals a conflict's local version.
    func finishConflict(_ path: String, at remotePath: RemotePath, versionID: String?) throws(SyncStepError) {
        do { try journal.putConflict(JournalConflict(itemPath: path, remotePath: remotePath.description, versionID: versionID)) } catch {
            throw .journal(error)
        }
    }

    /// Takes back a conflict that was not made (the item changed again): its copy on the server
    /// and its record.
    func withdrawConflict(_ path: String, at remotePath: RemotePath) async throws(SyncStepError) {
        let store = self.store
        do { try await store.delete(remotePath, condition: .unconditional) } catch .notFound {} catch { throw .remote(error) }
        do { try journal.removeConflict(remotePath: remotePath.description) } catch { throw .journal(error) }
    }

    /// The folders of `target` in the conflict area, made when missing.
    func makeFolders(of target: RemotePath) async throws(SyncStepError) {
        let store = self.store
        try await onServer { () async throws(RemoteStoreError) in
            var current = RemotePath.root
            for component in target.components.dropLast() {
                guard let next = current.appending(component) else { return }
                try await store.makeFolder(next)
                current = next
            }
        }
    }

    /// Uploads the local bytes of a conflict to `target` in the conflict area. Already there (the
    /// same name comes from the same bytes: a retry after a crash): done.
    func uploadToConflictArea(_ path: String, snapshot: URL, at target: RemotePath) async throws(SyncStepError) {
        try await makeFolders(of: target)
        let store = self.store
        do {
            _ = try await store.upload(snapshot, to: target, condition: .mustNotExist) { _, _ in }
        } catch .preconditionFailed {
        } catch {
            throw .remote(error)
        }
    }

    /// The item path of a conflict-area file (`.clouddocs-conflicts/a/b.txt/NAME` → `a/b.txt`).
    static func itemPath(ofConflictFile remotePath: String) -> String? {
        let components = remotePath.split(separator: "/").map(String.init)
        guard components.count >= 3, components.first == SyncExclusions.conflictArea else { return nil }
        return components.dropFirst().dropLast().joined(separator: "/")
    }

    /// Makes the conflict-area version `remotePath` an unresolved conflict version here, once:
    /// journalled first (without a version), then — unless an unresolved version with the same
    /// bytes that the journal does not know is there already (a crash after it was added) —
    /// added, then journalled with its identifier.
    private func adoptConflict(_ remotePath: String, unit: ConflictAreaUnit) async throws(SyncStepError) {
        let itemPath = unit.itemPath
        guard let entry = journal.entries[itemPath], !entry.isFolder else { return }
        let target = local.url(itemPath)
        guard LocalScanner.fingerprint(target.path) != nil, let remote = RemotePath(remotePath) else { return }
        if journal.conflicts[remotePath] == nil {
            do { try journal.putConflict(JournalConflict(itemPath: itemPath, remotePath: remotePath, versionID: nil)) } catch {
                throw .journal(error)
            }
        }
        let temporary: URL
        if let files = unit.packageFiles {
            temporary = try await fetchConflictPackage(itemPath, files: files)
        } else {
            temporary = try await fetch(remotePath, remote: unit.item).0
        }
        defer { PackageTree.remove(temporary.path) }
        let known = Set(journal.conflicts.values.compactMap(\.versionID))
        let isPackage = unit.packageFiles != nil
        let local = self.local
        let versionID = try await offThePool { () throws(SyncStepError) -> String in
            try local.checkFolders(of: itemPath)
            let existing = (try? FileVersion.unresolvedConflictVersionsOfItem(at: target)) ?? []
            if let same = existing.first(where: { version in
                !known.contains(version.persistentIdentifier.rawValue)
                    && (isPackage ? PackageTree.haveSameContents(version.url.path, temporary.path)
                                  : LocalFiles.haveSameContents(version.url.path, temporary.path))
            }) {
                return same.persistentIdentifier.rawValue
            }
            do {
                return try FileVersion.addSyncConflictVersion(ofItemAt: target, withContentsOf: temporary, byMoving: true,
                                                              savingComputer: nil, coordinator: nil).persistentIdentifier.rawValue
            } catch {
                throw .local(path: itemPath, reason: "cannot add the conflict version: \(error)")
            }
        }
        try finishConflict(itemPath, at: remote, versionID: versionID)
    }

    /// Fetches a package conflict version's files into a new temporary folder.
    private func fetchConflictPackage(_ itemPath: String, files: [(relative: String, item: RemoteItem)]) async throws(SyncStepError) -> URL {
        let temporary = transferFile("conflict-package")
        try PackageTree.makeFolder(temporary.path, path: itemPath)
        let store = self.store
        do throws(SyncStepError) {
            for (relative, item) in files.sorted(by: { $0.relative < $1.relative }) {
                var folder = temporary.path
                for component in relative.split(separator: "/").dropLast() {
                    folder += "/" + component
                    try PackageTree.makeFolder(folder, path: itemPath)
                }
                _ = try await onServer { () async throws(RemoteStoreError) -> RemoteTag? in
                    try await store.download(item.path, to: URL(filePath: temporary.path + "/" + relative), listedSize: item.size) { _, _ in }
                }
            }
            try PackageTree.flush(temporary.path, path: itemPath)
            return temporary
        } catch {
            PackageTree.remove(temporary.path)
            throw error
        }
    }

    private func propagateResolution(_ conflict: JournalConflict, remote: RemoteItem?) async throws(SyncStepError) {
        let target = local.url(conflict.itemPath)
        let version: FileVersion? = conflict.versionID.flatMap { identifier in
            try? FileVersion.version(itemAt: target, forPersistentIdentifier: FileVersion.PersistentIdentifier(rawValue: identifier))
        }
        guard let remote else {
            // Resolved on another device (or never uploaded): resolve here too.
            if let version, !version.isResolved {
                do { try await offThePool { () throws(SyncStepError) in
                    do { try version.resolve() } catch { throw .local(path: conflict.itemPath, reason: "cannot resolve: \(error)") }
                } }
            }
            try forgetConflict(conflict)
            return
        }
        let resolvedHere = version.map { $0.isResolved } ?? true
        guard resolvedHere else { return }
        let path = try remotePath(conflict.remotePath)
        let condition: RemoteWriteCondition = remote.isFolder ? .unconditional
            : remote.tag.map { $0.isWeak ? .unconditional : .mustMatch($0) } ?? .unconditional
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
