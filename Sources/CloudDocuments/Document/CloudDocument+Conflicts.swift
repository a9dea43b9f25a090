import FileCoordination
import Foundation
import SystemSupport

// No silent lost updates: a save that would overwrite a file changed since the document last read
// or wrote it keeps the file's contents as an unresolved conflict version first, and the document
// gains `.inConflict` until the item's last unresolved conflict version is resolved or removed.
// See Docs/Versions.md, "Conflicts in documents".

extension CloudDocument {
    /// What a save keeps of the contents it is about to overwrite.
    struct OverwriteProtection: Sendable {
        /// The contents to write: the snapshot's, or what ``resolveConflict(withCurrentContentsAt:ofType:saving:)``
        /// merged.
        var contents: DocumentContents
        /// The conflict version kept, if the file had changed and was not merged.
        var conflict: FileVersion?
        /// Nothing was at the target when it was checked: the write must then *create* it, never
        /// replace what appeared since (a folder moved into place around it by a program that did
        /// not coordinate, say), which nobody checked.
        var targetWasMissing = false
        /// A version of the file was kept (which may have given the file its version-store identity).
        var keptVersion = false
    }

    /// Runs inside the save's coordinated write of `target`, before the new contents are written.
    /// If the file there is the document's own file and differs from what the document last read
    /// or wrote (its `FileIdentity`), lets ``resolveConflict(withCurrentContentsAt:ofType:saving:)``
    /// merge, or else keeps the file as an unresolved conflict version. Otherwise, with
    /// ``preservesVersions``, keeps it as an ordinary version. Versions are added with the save's
    /// `coordinator` (a second coordinator would fail with would-deadlock).
    ///
    /// Throws ``DocumentError/saveFailed(_:reason:errno:)`` when the contents could not be kept:
    /// the save must then not overwrite them.
    /// `targetPath` is `target`'s path (`PathBytes.path(of:)`), worked out once per save;
    /// `requestedURL` is the URL the save was asked for (before the coordinator followed a move)
    /// and `startURL` the document's file at that moment.
    nonisolated func protectOverwrittenContents(at target: URL, path targetPath: String, for operation: SaveOperation,
                                                requested requestedURL: URL, startedFor startURL: URL,
                                                contents: DocumentContents, coordinator: Coordinator) throws -> OverwriteProtection {
        var result = OverwriteProtection(contents: contents, conflict: nil)
        guard operation == .forOverwriting else { return result }
        let (known, racy, fileURL, preserves, locations) = storage.withLock {
            ($0.diskIdentity, $0.racyContents, $0.fileURL, $0.preservesVersions, $0.locations)
        }
        // The document's own file: where it is now, or where it was when the save was asked for
        // (a move notice that arrives during the save — late, or for a move undone since — must
        // not turn the check off and let the save overwrite the file unseen). Closed or not: a
        // document closed meanwhile (a coordinated delete of a folder it was thought to be in,
        // say) still knows what it last read or wrote there, and an explicit save of it must not
        // overwrite another program's change unseen either.
        // A save asked for the document's file is a save over it wherever the coordinator found
        // it (an item moved while the save waited for its lock is locked, and written, where it
        // is now: `target` is then that place).
        // And any place the file had since it was opened (`DocumentLocations`): a move undone
        // before its notice arrived must not make a save over the file look like a save as.
        let isOwnFile = requestedURL.isSameFilePath(as: startURL) || fileURL.isSameFilePath(as: target)
            || startURL.isSameFilePath(as: target) || locations.contains(requestedURL) || locations.contains(target)
        // An identity that looks unchanged but was recorded within a clock tick of its change
        // time is checked against the bytes (RacyIdentity): another save in the same tick, on a
        // reused inode, would otherwise be overwritten unseen. The identity and the bytes are
        // read through one descriptor (`RacyIdentity.look`).
        let (found, holds) = RacyIdentity.look(at: targetPath, kept: isOwnFile && known != nil ? racy : nil)
        guard let current = found else {
            result.targetWasMissing = true
            return result
        }
        if isOwnFile, let known, current != known || !holds {
            let merged = try onMainActor { () throws -> DocumentContents? in
                try resolveConflict(withCurrentContentsAt: target, ofType: savingType(for: target), saving: contents)
            }
            if let merged {
                result.contents = merged
            } else {
                result.conflict = try keepVersion(of: target, isConflict: true, coordinator: coordinator)
                result.keptVersion = true
                return result
            }
        }
        if preserves {
            _ = try keepVersion(of: target, isConflict: false, coordinator: coordinator)
            result.keptVersion = true
        }
        return result
    }

    /// Adds the file at `target` (still in place) as a version of itself.
    private nonisolated func keepVersion(of target: URL, isConflict: Bool, coordinator: Coordinator) throws -> FileVersion {
        do {
            return try withVersionStore { () throws(FileVersionError) -> FileVersion in
                try FileVersion.addVersion(ofItemAt: target, withContentsOf: target, byMoving: false,
                                           isConflict: isConflict, savingComputer: FileVersion.hostName,
                                           coordinator: coordinator)
            }
        } catch {
            let what = isConflict ? "the changed file as a conflict version" : "the previous contents as a version"
            throw DocumentError.saveFailed(target, reason: "could not keep \(what) (\(error))", errno: nil)
        }
    }

    /// Sets or clears ``DocumentState/inConflict`` from the version store and the item's folder:
    /// set while the item at ``fileURL`` has an unresolved conflict version (a stored one, or a
    /// sync tool's conflict copy beside it). Does nothing while closed. Any thread but the main one
    /// (it reads the store and the folder); checks run one at a time, so a later check's answer is
    /// never overwritten by an earlier one's.
    ///
    /// The check never promotes an rclone bisync copy (`promoting: false`): it runs within
    /// milliseconds of a copy appearing, while rclone may still be copying the other side's copy;
    /// the change monitor promotes once the folder has settled, and the document then reloads the
    /// promoted contents like any change of its file.
    nonisolated func refreshConflictState() {
        ThreadAssertions.assertNotOnMainQueue()
        ThreadAssertions.assertNotOnQueue(Self.conflictChecks)  // a check inside a check would wait for itself
        Self.conflictChecks.sync {
            let (url, isOpen) = storage.withLock { ($0.fileURL, $0.isOpen) }
            guard isOpen else { return }
            let inConflict = withVersionStore {
                !((try? FileVersion.unresolvedConflictVersions(ofItemAt: url, promoting: false)) ?? []).isEmpty
            }
            update { storage in
                guard storage.isOpen, storage.fileURL == url else { return }
                if inConflict { storage.state.insert(.inConflict) } else { storage.state.remove(.inConflict) }
            }
        }
    }

    /// ``refreshConflictState()`` later, off the calling queue (for presenter messages, which
    /// must not block the presenter queue).
    nonisolated func scheduleConflictCheck() {
        Self.conflictCheckWork.async { [self] in refreshConflictState() }
    }

    /// Runs `body` with the document's version store (see `versionStoreOverride`).
    nonisolated func withVersionStore<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let store = versionStoreOverride else { return try body() }
        var outcome: Result<T, E>?
        VersionStore.$override.withValue(store) {
            do throws(E) { outcome = .success(try body()) } catch { outcome = .failure(error) }
        }
        // withValue ran the closure, so outcome is set.
        guard let outcome else { return try body() }
        return try outcome.get()
    }

    /// Serialises conflict checks of all documents (each is a short read of the version store).
    /// Process-wide on purpose (listed on `CoordinationRuntime`): a queue that holds no state,
    /// only an order of work, and bounds how many version-store reads run at once in the process.
    nonisolated static let conflictChecks = DispatchQueue(label: "CloudDocument.conflictChecks")
    /// Where scheduled checks run (they then wait for `conflictChecks`). Process-wide, like it.
    nonisolated static let conflictCheckWork = DispatchQueue(label: "CloudDocument.conflictCheckWork")
}
