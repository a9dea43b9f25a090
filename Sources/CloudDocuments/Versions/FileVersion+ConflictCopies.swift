import FileCoordination
import Foundation
import Glibc
import SystemSupport

// Sync tools' conflict copies as conflict versions: the copies of an item in its folder (named by
// `SyncConflictNaming`'s rules) are listed with the versions of the store, and resolving or
// removing one deletes the copy through a coordinated write. See Docs/Versions.md, "Conflict
// copies of sync tools".

extension FileVersion {
    /// A version with the moment it came to be, for the "oldest first" order of the queries: a
    /// stored version when it was added, a conflict copy when it was made in the folder (its
    /// change time, which the sync tool's rename or creation sets).
    struct Dated {
        let version: FileVersion
        let date: Date
        /// Stored versions sort before copies of the same instant.
        let isCopy: Bool
    }

    /// The conflict copies of the item at `url` in its folder (one `readdir`), oldest first. With
    /// `promoting`, an rclone bisync winner is first renamed to the item's name when the item is
    /// missing (``BisyncPromotion``; best effort: when its coordinated write fails, the winner is
    /// listed as a copy like the others); pass the `coordinator` whose write of the item you are
    /// inside, if any. Empty when the folder cannot be read.
    static func conflictCopies(ofItemAt url: URL, promoting: Bool, coordinator: Coordinator? = nil) -> [Dated] {
        let path = PathBytes.path(of: url)
        guard let parts = SyncFolderListing.split(path),
              var names = SyncFolderListing.candidateNames(inFolder: parts.folder, forOriginal: parts.name) else {
            return []
        }
        let (folder, name) = parts
        if promoting, let winner = BisyncPromotion.promoteIfNeeded(itemAt: url, listing: names,
                                                                         coordinator: coordinator ?? Coordinator.joiningCurrentAccess(to: url) ?? Coordinator()) {
            names.removeAll { $0 == winner.name }
            names.append(name)
        }
        guard let group = SyncConflictNaming.conflictGroup(of: name, in: names, options: .local) else { return [] }
        return group.copies.compactMap { copy in
            let copyPath = SyncFolderListing.join(folder, copy.name)
            guard let identity = FileIdentity.of(copyPath, followingLinks: false) else { return nil }
            let version = FileVersion(conflictCopy: copy, at: copyPath, identity: identity, itemURL: url, store: .standard)
            return Dated(version: version, date: Self.date(nanoseconds: identity.changed), isCopy: true)
        }
        .sorted(by: Self.oldestFirst)
    }

    /// The conflict copy `copyName` of the item at `url` (beside it), if it is still there and is
    /// a conflict copy of the item.
    static func conflictCopy(ofItemAt url: URL, named copyName: String) -> FileVersion? {
        guard let parts = SyncFolderListing.split(PathBytes.path(of: url)),
              let copy = SyncConflictNaming.conflictCopy(named: copyName, amongOriginals: [parts.name], options: .local),
              copy.originalName == parts.name else { return nil }
        let copyPath = SyncFolderListing.join(parts.folder, copyName)
        guard let identity = FileIdentity.of(copyPath, followingLinks: false) else { return nil }
        return FileVersion(conflictCopy: copy, at: copyPath, identity: identity, itemURL: url, store: .standard)
    }

    /// The order of the queries: oldest first; stored versions before copies of the same instant;
    /// then by identifier.
    static func oldestFirst(_ left: Dated, _ right: Dated) -> Bool {
        if left.date != right.date { return left.date < right.date }
        if left.isCopy != right.isCopy { return !left.isCopy }
        return left.version.persistentIdentifier.rawValue.utf8.lexicographicallyPrecedes(
            right.version.persistentIdentifier.rawValue.utf8)
    }

    private static func date(nanoseconds: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(nanoseconds / 1_000_000_000) + TimeInterval(nanoseconds % 1_000_000_000) / 1e9)
    }

    /// Deletes this conflict copy inside a coordinated write of its item and of the copy
    /// (`.forDeleting`), then sends the presenters of the item `messages` (for this version).
    /// Throws ``FileVersionError/versionNotFound(_:)`` when the copy is gone already.
    func deleteConflictCopy(coordinator: Coordinator?, messages: @escaping (FileVersionReference) -> [FileVersionChange])
        throws(FileVersionError) {
        try Self.coordinatedWrite(itemURL, options: .contentIndependentMetadataOnly, alsoWriting: (url, .forDeleting),
                                  coordinator: coordinator,
                                  announce: { _, itemURL in messages(reference(itemURL: itemURL)) }) {
            (_) throws(FileVersionError) in
            try Self.removeCopy(at: url)
        }
    }

    /// Deletes every conflict copy of the item at `url`, each in a coordinated write of the copy
    /// (`.forDeleting`) made with `coordinator` (inside its write of the item), after promoting an
    /// rclone bisync winner when the item is missing. Should the item still be missing, rclone
    /// copies are kept: one of them is the only current contents there are. Returns the removed
    /// versions; a copy gone meanwhile is skipped.
    static func removeConflictCopies(ofItemAt url: URL, coordinator: Coordinator) throws(FileVersionError) -> [FileVersion] {
        let copies = conflictCopies(ofItemAt: url, promoting: true, coordinator: coordinator)
        let itemIsMissing = FileIdentity.of(PathBytes.path(of: url), followingLinks: false) == nil
        var removed: [FileVersion] = []
        for dated in copies {
            let version = dated.version
            if itemIsMissing, let name = version.conflictCopyName,
               SyncConflictNaming.conflictCopy(named: name, options: .local)?.tool == .rcloneBisync { continue }
            var failure: FileVersionError?
            do {
                try coordinator.coordinate(writingItemAt: version.url, options: .forDeleting) { _ in
                    do throws(FileVersionError) { try removeCopy(at: version.url) } catch { failure = error }
                }
            } catch {
                throw .coordinationFailed(version.url, underlying: CoordinationError(thrownByCoordinating: error))
            }
            if let failure {
                if case .versionNotFound = failure { continue }
                throw failure
            }
            removed.append(version)
        }
        return removed
    }

    /// Removes the file or folder of a conflict copy (a folder for a package's copy).
    static func removeCopy(at url: URL) throws(FileVersionError) {
        let path = PathBytes.path(of: url)
        let info: stat?
        do { info = try POSIX.linkStatus(path) } catch { throw FileVersionError(error) }
        guard let info else { throw .versionNotFound(url) }
        if info.st_mode & S_IFMT == S_IFDIR {
            if let error = POSIX.removeTree(path) { throw FileVersionError(error) }
        } else {
            do { try POSIX.unlink(path) } catch {
                if error.code == ENOENT { throw .versionNotFound(url) }
                throw FileVersionError(error)
            }
        }
    }
}
