import Foundation

extension SyncEngine {
    /// Upload of what a coordinated read saw (open documents save first), streamed to the server
    /// under `If-Match` (the tag the plan saw, which is the journal's) or `If-None-Match: *`. A 412
    /// leaves the item for the next pass, which sees the server's change.
    ///
    /// What is read (``LocalCoordination/openForUpload(_:snapshot:readInPlace:)``): a reflink
    /// where the file system has them; else, on a server the plain client talks to, the item
    /// itself — opened inside the coordinated read and read after it, so a save is not held up
    /// for the whole upload — the client checking after its last read, before its last byte, that
    /// the file did not change (a torn body never lands: the request is cut); else a copy.
    /// A file that changed while it was sent is left to the next pass (deferred, retried soon).
    func upload(_ path: String, remote: RemoteItem?, base: JournalEntry?) async throws(SyncStepError) {
        let target = try remotePath(path)
        let condition = try await writeCondition(for: remote, at: target)
        let snapshot = transferFile("upload")
        defer { LocalFiles.remove(snapshot.path) }
        let local = self.local
        let readInPlace = (store as? WebDAVStore)?.checksFileBodiesWhileSending == true
        guard let source = try await offThePool({ () throws(SyncStepError) -> LocalCoordination.UploadSource? in
            try local.openForUpload(path, snapshot: snapshot, readInPlace: readInPlace)
        }) else { return }  // deleted meanwhile: the next pass plans it
        let fingerprint: LocalFingerprint, file: URL, opened: OpenUploadItem?
        switch source {
        case .snapshot(let taken): (fingerprint, file, opened) = (taken, snapshot, nil)
        case .item(let item): (fingerprint, file, opened) = (item.fingerprint, URL(fileURLWithPath: item.procPath), item)
        }
        let store = self.store, box = statusBox, throttle = TransferProgressThrottle()
        box.progress(path: path, isUpload: true, done: 0, total: fingerprint.size)
        defer { box.finishTransfer(path: path) }
        var tag: RemoteTag?
        do {
            tag = try await onServer { () async throws(RemoteStoreError) -> RemoteTag? in
                try await store.upload(file, to: target, condition: condition) { done, total in
                    if throttle.admits(done: done, total: total) { box.progress(path: path, isUpload: true, done: done, total: total) }
                }
            }
        } catch {
            if let opened, !opened.isUnchanged { throw .deferred(path: path, reason: Self.changedWhileUploaded) }
            throw error
        }
        // Read in place and changed since the coordinated read, though not while the client read
        // it (or the client would have cut the request): the bytes sent are whole, but maybe of
        // a later state than `fingerprint`'s.
        let sentKnownBytes = opened?.isUnchanged ?? true
        var fileID = remote?.fileID
        var verification = TagVerification.fromWriteAnswer
        if tag == nil || fileID == nil {
            let item = try await onServer { () async throws(RemoteStoreError) -> RemoteItem? in try await store.item(at: target) }
            if tag == nil {
                tag = item?.tag
                if sentKnownBytes {
                    verification = Self.verify(item, fingerprint: fingerprint) { tag in
                        if let opened { ContentDigest.tag(tag, isSHA1OfOpenFile: opened.descriptor) }
                        else { ContentDigest.tag(tag, isSHA1Of: snapshot.path) }
                    }
                } else {
                    // Which bytes the read tag is of cannot be told: compared afresh by the next pass.
                    verification = .notOurs
                }
            }
            fileID = item?.fileID ?? fileID
        }
        var entry = JournalEntry(path: path, isFolder: false, local: fingerprint, remoteTag: tag, fileID: fileID,
                                 state: base?.state ?? .synced)
        switch verification {
        case .fromWriteAnswer, .sameDigest: break
        case .unverified: entry.tagUnverified = true
        case .notOurs:
            // Someone else's bytes: neither side is "as synced", so the next pass compares them
            // (a conflict that keeps ours as a version, unless they are identical).
            entry.local = nil
            entry.remoteTag = nil
        }
        if base == nil { entry.addedAt = Int64(Date().timeIntervalSince1970) }
        try record(entry)
        await shareLocalConflictVersions(of: path)
    }

    /// Why an upload read in place was left to the next pass.
    static let changedWhileUploaded = "changed while it was uploaded (the upload was cut before its end, nothing "
        + "landed on the server): uploaded again by the next pass"

    /// How far a tag recorded after an upload is known to be the tag of the uploaded bytes.
    enum TagVerification {
        /// The write's answer carried it.
        case fromWriteAnswer
        /// Read afterwards, and it is the SHA-1 of the uploaded bytes (Apache `FileETag Digest`).
        case sameDigest
        /// Read afterwards, with our size, and nothing more can be told without the bytes.
        case unverified
        /// Read afterwards, and not ours (another size or digest, or the item is gone): a third
        /// party wrote between the `PUT` and the listing.
        case notOurs
    }

    /// Checks the item read right after an upload against the uploaded bytes (`isDigestOfUpload`:
    /// whether a tag is the SHA-1 of them).
    static func verify(_ item: RemoteItem?, fingerprint: LocalFingerprint,
                       isDigestOfUpload: (RemoteTag) -> Bool) -> TagVerification {
        guard let item, !item.isFolder, let tag = item.tag else { return .notOurs }
        if let size = item.size, size != fingerprint.size { return .notOurs }
        if ContentDigest.looksLikeSHA1(tag) {
            return isDigestOfUpload(tag) ? .sameDigest : .notOurs
        }
        return .unverified
    }

    /// The condition of a write over `remote` (what the plan saw).
    ///
    /// On a server safe for conditional writes (``RemoteCapabilities/isSafeForConditionalWrites``):
    /// `If-Match` the plan's strong tag, `If-None-Match: *` when there was nothing.
    ///
    /// Otherwise (**safe mode**) the item is read again first and must still be what the plan saw
    /// (same tag value, size and modification time), else the write is refused as a 412 and the
    /// next pass sees the change. Then:
    /// - a tag still weak (Apache's default marks it weak for about a second after a write) is
    ///   waited out: the step is deferred to the next pass, when the tag is strong and can be
    ///   sent in `If-Match` — the server still guards the write;
    /// - on a server whose tag survives a same-size rewrite within the same second (WsgiDAV),
    ///   an item written less than ``sameSecondMargin`` ago is deferred too, so no two writes
    ///   land in the same second and every write changes the tag the other devices compare;
    /// - a strong tag is then sent in `If-Match`; only an item without any tag is written
    ///   unconditionally, right after the re-check (the agent refuses servers without tags, so
    ///   this is a single missing tag).
    func writeCondition(for remote: RemoteItem?, at path: RemotePath) async throws(SyncStepError) -> RemoteWriteCondition {
        guard let remote else { return .mustNotExist }
        let capabilities = await store.capabilities
        if capabilities.isSafeForConditionalWrites, let tag = remote.tag, !tag.isWeak { return .mustMatch(tag) }
        let store = self.store
        let now = try await onServer { () async throws(RemoteStoreError) -> RemoteItem? in try await store.item(at: path) }
        guard let now, now.tag?.value == remote.tag?.value, now.size == remote.size, now.modified == remote.modified else {
            throw .remote(.preconditionFailed(path))
        }
        if !capabilities.tagChangesOnEveryWrite, let modified = now.modified,
           Date().timeIntervalSince(modified) < Self.sameSecondMargin {
            throw .deferred(path: path.description, reason: "written on the server less than 2 s ago; its tag could "
                + "hide a same-size rewrite (safe mode)")
        }
        guard let tag = now.tag else { return .unconditional }
        guard !tag.isWeak else {
            throw .deferred(path: path.description, reason: "its tag is still weak (safe mode waits until it is strong)")
        }
        return .mustMatch(tag)
    }

    /// How long after an item's last write (by its server time) safe mode waits before writing
    /// it again on a server whose tag does not change with a same-size rewrite in the same second.
    /// Two seconds cover the whole-second rounding of the tag and a small clock difference.
    static let sameSecondMargin: TimeInterval = 2

    /// Streams the server's file to a temporary file in the agent's folder and flushes it (its
    /// writeback started while it arrives: ``DownloadWriteback``); returns the file and the tag
    /// of its bytes.
    func fetch(_ path: String, remote: RemoteItem) async throws(SyncStepError) -> (URL, RemoteTag?) {
        let source = try remotePath(path)
        let temporary = transferFile("download")
        let store = self.store, box = statusBox
        let writeback = DownloadWriteback(path: temporary.path), throttle = TransferProgressThrottle()
        box.progress(path: path, isUpload: false, done: 0, total: remote.size)
        defer { box.finishTransfer(path: path) }
        do {
            let tag = try await onServer { () async throws(RemoteStoreError) -> RemoteTag? in
                try await store.download(source, to: temporary, listedSize: remote.size) { done, total in
                    writeback.received(done)
                    if throttle.admits(done: done, total: total) { box.progress(path: path, isUpload: false, done: done, total: total) }
                }
            }
            try LocalFiles.flush(temporary.path)
            return (temporary, tag ?? remote.tag)
        } catch {
            LocalFiles.remove(temporary.path)
            throw error
        }
    }

    /// Download: fetched completely to a temporary file, then renamed over the item inside a
    /// coordinated write, after checking the item is still what the journal knew. When it is
    /// not (edited since the plan), the download becomes a conflict.
    func download(_ path: String, remote: RemoteItem, base: JournalEntry?,
                  newConflicts: inout Set<String>) async throws(SyncStepError) {
        let (temporary, tag) = try await fetch(path, remote: remote)
        defer { LocalFiles.remove(temporary.path) }
        let local = self.local
        let expected = base?.isFolder == false ? base?.local : nil
        let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
            try local.place(temporary, at: path, expected: expected)
        }
        switch placement {
        case .placed(let fingerprint, _):
            try record(JournalEntry(path: path, isFolder: false, local: fingerprint, remoteTag: tag, fileID: remote.fileID,
                                    state: base?.state ?? .synced))
        case .changedLocally:
            try await resolveConflict(path, remote: remote, downloaded: (temporary, tag), base: base, newConflicts: &newConflicts)
        }
    }

    /// Both sides changed. The local file is read (coordinated) and compared with the server's
    /// bytes: identical edits are no conflict. Otherwise the local bytes go to the server's
    /// conflict area (for the other devices), then — inside one coordinated write — they become
    /// an unresolved conflict version here and the server's version is put in place.
    func resolveConflict(_ path: String, remote: RemoteItem, downloaded: (URL, RemoteTag?)?, base: JournalEntry?,
                         newConflicts: inout Set<String>) async throws(SyncStepError) {
        let (temporary, tag) = if let downloaded { downloaded } else { try await fetch(path, remote: remote) }
        let snapshot = transferFile("conflict")
        defer {
            LocalFiles.remove(temporary.path)
            LocalFiles.remove(snapshot.path)
        }
        let local = self.local
        guard let fingerprint = try await offThePool({ () throws(SyncStepError) -> LocalFingerprint? in
            try local.snapshot(path, to: snapshot)
        }) else {
            // Deleted here meanwhile: the server's edit wins.
            let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
                try local.place(temporary, at: path, expected: nil)
            }
            if case .placed(let placed, _) = placement {
                try record(JournalEntry(path: path, isFolder: false, local: placed, remoteTag: tag, fileID: remote.fileID))
            }
            return
        }
        if LocalFiles.haveSameContents(snapshot.path, temporary.path) {
            try record(JournalEntry(path: path, isFolder: false, local: fingerprint, remoteTag: tag, fileID: remote.fileID,
                                    state: base?.state ?? .synced))
            return
        }
        // Named after the pair of versions, journalled before anything is written: a step
        // retried after a `kill -9` reuses the name and finds its earlier work (no duplicate).
        let conflictPath = try conflictAreaPath(path, remoteTag: tag ?? remote.tag, local: fingerprint)
        try beginConflict(path, at: conflictPath)
        try await uploadToConflictArea(path, snapshot: snapshot, at: conflictPath)
        let placement = try await offThePool { () throws(SyncStepError) -> LocalCoordination.Placement in
            try local.place(temporary, at: path, expected: fingerprint, conflictContents: snapshot)
        }
        switch placement {
        case .placed(let placed, let versionID):
            try finishConflict(path, at: conflictPath, versionID: versionID)
            try record(JournalEntry(path: path, isFolder: false, local: placed, remoteTag: tag, fileID: remote.fileID,
                                    state: .inConflict))
            newConflicts.insert(conflictPath.description)
        case .changedLocally:
            // Edited again meanwhile: withdraw the copy; the next pass compares anew.
            try? await withdrawConflict(path, at: conflictPath)
        }
    }

    /// Deletes on the server what was deleted here: a file under `If-Match` its tag; a folder
    /// only when nothing synced is left in it. A missing item is already done.
    func deleteRemote(_ path: String, remote: RemoteItem?) async throws(SyncStepError) {
        guard let remote else { try forget(path); return }
        let target = try remotePath(path)
        let store = self.store
        let condition: RemoteWriteCondition
        if remote.isFolder {
            // A folder has no tag that guards its contents (Apache: `W/""`), so it is moved aside
            // first — atomic, and nobody writes there — then its listing is checked: deleted only
            // when nothing synced is left in it, else put back (kept: re-planned).
            guard let aside = try await moveAside(target) else { try forget(path); return }
            let left = try await listTree(aside) ?? []
            guard left.allSatisfy({ SyncExclusions.excludes($0.item.path.name) }) else {
                try await restoreAside(aside, to: target)
                return
            }
            try markVerified(aside, real: target)
            try await discardPrivate(aside)
            try forget(path)
            return
        } else {
            condition = try await writeCondition(for: remote, at: target)
        }
        do {
            try await store.delete(target, condition: condition)
        } catch .notFound {
        } catch {
            throw .remote(error)
        }
        try forget(path)
    }
}
