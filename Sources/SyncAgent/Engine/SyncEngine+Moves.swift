import Foundation

extension SyncEngine {
    /// A rename made here, carried to the server with a conditional `MOVE` (no upload). A 412 or
    /// a missing source leaves it to the next pass, which uploads and deletes instead.
    func moveRemote(_ source: String, to destination: String, remote: RemoteItem, fingerprint: LocalFingerprint,
                    base: JournalEntry?) async throws(SyncStepError) {
        let from = try remotePath(source), to = try remotePath(destination)
        let condition = try await writeCondition(for: remote, at: from)
        let store = self.store
        try await onServer { () async throws(RemoteStoreError) in try await store.move(from, to: to, condition: condition) }
        let moved = try await onServer { () async throws(RemoteStoreError) -> RemoteItem? in try await store.item(at: to) }
        try forget(source)
        try record(JournalEntry(path: destination, isFolder: false, local: fingerprint, remoteTag: moved?.tag ?? remote.tag,
                                fileID: moved?.fileID ?? remote.fileID, state: base?.state ?? .synced))
    }

    /// A rename made on the server (same file id and tag), made here by a coordinated move (no
    /// download; open documents follow). When the file changed here meanwhile, nothing moves and
    /// the next pass decides anew.
    func moveLocal(_ source: String, to destination: String, remote: RemoteItem, expected: LocalFingerprint,
                   base: JournalEntry?) async throws(SyncStepError) {
        let local = self.local
        guard let fingerprint = try await offThePool({ () throws(SyncStepError) -> LocalFingerprint? in
            try local.move(source, to: destination, expected: expected)
        }) else { return }
        try forget(source)
        try record(JournalEntry(path: destination, isFolder: false, local: fingerprint, remoteTag: remote.tag,
                                fileID: remote.fileID, state: base?.state ?? .synced))
    }
}
