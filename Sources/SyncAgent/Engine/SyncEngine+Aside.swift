import Foundation

/// Server-side renames under private names at the root of the store — how the engine deletes a
/// folder or a package, and replaces a package, without ever losing an update it did not see and
/// without exposing half a package:
///
/// - **aside**: the item is renamed (`MOVE`, `Overwrite: F`: atomic on a WebDAV server's file
///   system) to `.clouddocsd-aside-<id>`. Nobody else writes there, so its tree can then be
///   listed and **verified** to be what the plan saw; only then is it deleted (or replaced).
///   When it is not, it is moved back, and the next pass sees the change.
/// - **staging**: a package upload goes to `.clouddocsd-staging-<id>` first, file by file, and
///   is renamed under its real name only when complete.
///
/// Each private name is in the journal (``JournalPendingMove``) before the first request and
/// removed after the last, so a restart after `kill -9` finishes or undoes the work
/// (``recoverPendingMoves()``): staging folders are deleted; an aside item is put back unless it
/// was verified and its real name is taken again (a finished replacement), then it is deleted.
/// Other devices' engines defer local deletions while the server's root holds an aside item
/// (``serverHasItemsAside()``): a package being replaced is missing under its name for an instant.
extension SyncEngine {
    /// The prefix of aside names at the root of the store.
    static let asidePrefix = ".clouddocsd-aside-"
    /// The prefix of staging names at the root of the store.
    static let stagingPrefix = ".clouddocsd-staging-"

    /// Moves the item at `real` aside. Returns its aside path, or `nil` when it is not there.
    func moveAside(_ real: RemotePath) async throws(SyncStepError) -> RemotePath? {
        guard let aside = RemotePath.root.appending(Self.asidePrefix + UUID().uuidString) else {
            throw .local(path: real.description, reason: "no private name on the server")
        }
        try putPending(JournalPendingMove(privatePath: aside.description, realPath: real.description, isStaging: false))
        do {
            try await store.move(real, to: aside, condition: .unconditional)
            return aside
        } catch .notFound {
            try removePending(aside)
            return nil
        } catch {
            // Not moved (or not known to be): the recovery of the next pass puts it back if it was.
            throw .remote(error)
        }
    }

    /// Puts an aside item back under its real name; when that name was taken meanwhile, under a
    /// visible name beside it (`Name (kept by clouddocsd 1A2B).ext`), so nothing is lost.
    func restoreAside(_ aside: RemotePath, to real: RemotePath) async throws(SyncStepError) {
        do {
            try await store.move(aside, to: real, condition: .unconditional)
        } catch .notFound {
            // Already back (or gone with its parent folder): nothing to restore.
        } catch .preconditionFailed {
            guard let parent = real.parent, let kept = parent.appending(Self.keptName(real.name)) else {
                throw .remote(.preconditionFailed(real))
            }
            try await onServer { () async throws(RemoteStoreError) in try await store.move(aside, to: kept, condition: .unconditional) }
            statusBox.record("the server's copy was kept beside it as \(kept.name): another device wrote the same name meanwhile",
                             path: real.description)
        } catch {
            throw .remote(error)
        }
        try removePending(aside)
    }

    /// Deletes an aside item (verified, or a staging folder) and forgets it.
    func discardPrivate(_ path: RemotePath) async throws(SyncStepError) {
        do { try await store.delete(path, condition: .unconditional) } catch .notFound {} catch { throw .remote(error) }
        try removePending(path)
    }

    /// Marks an aside item as verified (its deletion loses nothing the plan did not see).
    func markVerified(_ aside: RemotePath, real: RemotePath) throws(SyncStepError) {
        try putPending(JournalPendingMove(privatePath: aside.description, realPath: real.description, isStaging: false, verified: true))
    }

    /// Finishes or undoes the private renames a killed agent left (see the type's comment).
    /// Failures are recorded and left for the next pass.
    func recoverPendingMoves() async {
        for pending in journal.pendingMoves.values.sorted(by: { $0.privatePath < $1.privatePath }) {
            guard let path = RemotePath(pending.privatePath), let real = RemotePath(pending.realPath) else {
                try? removePending(RemotePath(pending.privatePath) ?? .root, key: pending.privatePath)
                continue
            }
            do throws(SyncStepError) {
                if pending.isStaging {
                    try await discardPrivate(path)
                } else if pending.verified, try await onServer({ () async throws(RemoteStoreError) -> RemoteItem? in
                    try await store.item(at: real)
                }) != nil {
                    try await discardPrivate(path)
                } else {
                    try await restoreAside(path, to: real)
                }
            } catch {
                // Offline: the listing that follows says so; the rest waits for the next pass.
                if error.isTransient { return }
                statusBox.record("unfinished server rename: \(error.description)", path: pending.realPath)
            }
        }
    }

    /// Whether the server's root holds an item moved aside by some agent (a replacement or a
    /// deletion under way, or one a killed agent left until it restarts).
    func serverHasItemsAside() async throws(SyncStepError) -> Bool {
        let items = try await onServer { () async throws(RemoteStoreError) -> [RemoteItem] in try await store.list(.root) }
        return items.contains { $0.path.name.hasPrefix(Self.asidePrefix) }
    }

    /// `Name (kept by clouddocsd 1A2B3C4D).ext`.
    static func keptName(_ name: String) -> String {
        let mark = " (kept by clouddocsd \(UUID().uuidString.prefix(8)))"
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return String(name[..<dot]) + mark + String(name[dot...])
        }
        return name + mark
    }

    private func putPending(_ pending: JournalPendingMove) throws(SyncStepError) {
        do { try journal.putPendingMove(pending) } catch { throw .journal(error) }
    }

    private func removePending(_ path: RemotePath, key: String? = nil) throws(SyncStepError) {
        do { try journal.removePendingMove(privatePath: key ?? path.description) } catch { throw .journal(error) }
    }
}
