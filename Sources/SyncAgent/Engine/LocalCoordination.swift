import CSystemShim
import CloudDocuments
import FileCoordination
import Foundation
import Glibc
import SystemSupport
import Ubiquity

/// The engine's local file operations, each inside a coordinated access of the item: the agent
/// takes part in file coordination like Apple's daemon. Each call blocks the calling thread
/// (never a task of the cooperative pool: see ``SyncEngine``) for at most the coordinator's
/// timeout while presenters save or relinquish.
struct LocalCoordination: Sendable {
    /// The container folder.
    let container: URL
    let timeout: Duration

    /// What happened to a replacement.
    enum Placement: Sendable {
        /// In place; the item's fingerprint now, and the conflict version made, if any.
        case placed(LocalFingerprint, conflictVersion: String?)
        /// The local item no longer matched what the plan saw: nothing was changed.
        case changedLocally
    }

    func coordinator() -> Coordinator {
        let coordinator = Coordinator()
        coordinator.timeout = timeout
        return coordinator
    }

    func url(_ path: String) -> URL { container.appending(path: path, directoryHint: .notDirectory) }

    /// Runs `body` (a coordinated access of `path`): the accessor's own ``SyncStepError``s pass
    /// through; the coordinator's (a timeout, a refusing presenter) become `.local` errors that
    /// say `what` failed.
    func coordinated<T>(_ what: String, _ path: String, _ body: () throws -> T) throws(SyncStepError) -> T {
        do {
            return try body()
        } catch let error as SyncStepError {
            throw error
        } catch {
            throw .local(path: path, reason: "\(what) failed: \(error)")
        }
    }

    /// Refuses a path whose folders inside the container include a symbolic link (never followed:
    /// it could point outside the container) or a file.
    func checkFolders(of path: String) throws(SyncStepError) {
        var current = PathBytes.path(of: container)
        for component in path.split(separator: "/").dropLast() {
            current += "/" + component
            var info = stat()
            if lstat(current, &info) != 0 { return }  // missing: created as a real folder later
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw .local(path: path, reason: "a folder on its path is a symbolic link or a file: not followed")
            }
        }
    }

    /// Opens the item at `actualPath` for the agent's own read; nil when it is missing. That read
    /// is not a use of the document: without O_NOATIME it would make every uploaded file
    /// "recently used" for the space budget. O_NOATIME needs the file's owner (or CAP_FOWNER);
    /// anyone else reads it plainly.
    static func openForReading(_ actualPath: String, path: String) throws(SyncStepError) -> Int32? {
        var descriptor = open(actualPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | CSHIM_O_NOATIME)
        if descriptor < 0 && errno == EPERM { descriptor = open(actualPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw .local(path: path, reason: Errno.current.message)
        }
        return descriptor
    }

    /// Inside a coordinated read of the item (so an open document with unsaved changes, in any
    /// process, saves first), copies it to `snapshot`. Returns the fingerprint of what was
    /// copied, or `nil` when the item is missing; throws when it changed during the copy (a
    /// writer that does not coordinate) or cannot be read.
    func snapshot(_ path: String, to snapshot: URL) throws(SyncStepError) -> LocalFingerprint? {
        try checkFolders(of: path)
        let snapshotPath = PathBytes.path(of: snapshot)
        return try coordinated("coordinated read", path) {
            try coordinator().coordinate(readingItemAt: url(path)) { actual throws(SyncStepError) -> LocalFingerprint? in
                let actualPath = PathBytes.path(of: actual)
                guard let descriptor = try Self.openForReading(actualPath, path: path) else { return nil }
                defer { close(descriptor) }
                var before = stat(), after = stat()
                guard fstat(descriptor, &before) == 0, (before.st_mode & S_IFMT) == S_IFREG else {
                    throw .local(path: path, reason: "not a regular file")
                }
                try LocalFiles.copy(from: descriptor, to: snapshotPath)
                guard fstat(descriptor, &after) == 0, LocalFingerprint(before) == LocalFingerprint(after),
                      let named = LocalScanner.fingerprint(PathBytes.path(of: actual)), named == LocalFingerprint(before) else {
                    throw .local(path: path, reason: "changed while it was read (a writer that does not coordinate): retried later")
                }
                return LocalFingerprint(before)
            }
        }
    }

    /// Inside a plain coordinated write of the item: checks it still has the
    /// fingerprint `expected` (`nil`: still missing), then — when `conflictContents` is given —
    /// moves those bytes into the version store as an unresolved conflict version, and renames
    /// the complete, flushed `temporary` over the item and flushes its folder. Open documents
    /// relinquish and reload (one with unsaved changes keeps them, see Docs/Documents.md).
    ///
    /// A plain write, not `.forReplacing`: replacing counts as deleting (Apple's rule, kept by the
    /// coordinator), and a document asked to accommodate a deletion closes — dropping unsaved
    /// changes. A plain write tells an open document only that the file changed, so it reloads
    /// when it has nothing unsaved and otherwise keeps its edits (its next save keeps the
    /// downloaded bytes as a conflict version).
    func place(_ temporary: URL, at path: String, expected: LocalFingerprint?,
               conflictContents: URL? = nil) throws(SyncStepError) -> Placement {
        let target = try placementTarget(path)
        return try coordinated("coordinated write", path) {
            try coordinator().coordinate(writingItemAt: target) { actual throws(SyncStepError) -> Placement in
                let actualPath = PathBytes.path(of: actual)
                guard LocalScanner.fingerprint(actualPath) == expected else { return .changedLocally }
                let versionID = try conflictContents.flatMap { contents throws(SyncStepError) in
                    expected == nil ? nil : try Self.keepConflictVersion(of: actual, contents: contents, path: path)
                }
                if expected != nil { FileVersion.carryItemIdentity(from: actual, to: temporary) }
                guard Glibc.rename(PathBytes.path(of: temporary), actualPath) == 0 else {
                    throw .local(path: path, reason: "cannot put the download in place: \(Errno.current.message)")
                }
                try LocalFiles.flush(PathBytes.path(of: actual.deletingLastPathComponent()))
                // An evicted item is back: its placeholder goes now, inside the same write (the
                // file first: a crash in between leaves both, and the file wins), so a reader
                // that saw the file and then deleted or moved it never finds the item "evicted".
                // Also when a file was there: one written blind under the evicted name, now a
                // conflict version (``EvictedItems/writtenOver(known:local:in:)``).
                Self.removePlaceholder(besideItemAt: actual)
                guard let placed = LocalScanner.fingerprint(actualPath) else {
                    throw .local(path: path, reason: "vanished right after it was put in place")
                }
                return .placed(placed, conflictVersion: versionID)
            }
        }
    }

    /// Removes the placeholder beside `item` if there is one (files on demand), flushing the folder.
    static func removePlaceholder(besideItemAt item: URL) {
        guard let placeholder = ItemPlaceholder.placeholderURL(forItemAt: item) else { return }
        var info = stat()
        guard lstat(PathBytes.path(of: placeholder), &info) == 0 else { return }
        try? ItemPlaceholder.remove(forItemAt: item)
    }

    /// The URL of `path` for a placement, after checking its folders and making the missing ones.
    func placementTarget(_ path: String) throws(SyncStepError) -> URL {
        try checkFolders(of: path)
        let target = url(path)
        let parent = PathBytes.path(of: target.deletingLastPathComponent())
        if LocalScanner.fingerprint(parent) == nil { try LocalFiles.makeFolders(parent) }
        return target
    }

    /// Moves `contents` (a file or a package folder) into the version store as an unresolved
    /// conflict version of the item at `actual`; returns the version's identifier. Call it inside
    /// the coordinated write of the item.
    static func keepConflictVersion(of actual: URL, contents: URL, path: String) throws(SyncStepError) -> String {
        do {
            let version = try FileVersion.addSyncConflictVersion(ofItemAt: actual, withContentsOf: contents,
                                                                 byMoving: true, savingComputer: nil, coordinator: nil)
            return version.persistentIdentifier.rawValue
        } catch {
            throw .local(path: path, reason: "cannot keep the local version as a conflict version: \(error)")
        }
    }

    /// Inside one coordinated access — the source `.forMoving`, the destination `.forReplacing` —
    /// renames the file at `source` to `destination` when the source still has the fingerprint
    /// `expected` and nothing is at the destination, and tells presenters
    /// (``Coordinator/item(at:didMoveTo:)``): open documents follow. Returns the moved file's
    /// fingerprint, or `nil` when either side changed (nothing was moved).
    func move(_ source: String, to destination: String, expected: LocalFingerprint) throws(SyncStepError) -> LocalFingerprint? {
        try checkFolders(of: source)
        try checkFolders(of: destination)
        let parent = PathBytes.path(of: url(destination).deletingLastPathComponent())
        if LocalScanner.fingerprint(parent) == nil { try LocalFiles.makeFolders(parent) }
        let coordinator = coordinator()
        do {
            return try coordinator.coordinate(writingItemAt: url(source), options: .forMoving,
                                              writingItemAt: url(destination), options: .forReplacing) {
                from, to throws(SyncStepError) -> LocalFingerprint? in
                let fromPath = PathBytes.path(of: from), toPath = PathBytes.path(of: to)
                guard LocalScanner.fingerprint(fromPath) == expected, LocalScanner.fingerprint(toPath) == nil else { return nil }
                guard Glibc.rename(fromPath, toPath) == 0 else {
                    throw .local(path: destination, reason: "cannot move \(source) here: \(Errno.current.message)")
                }
                coordinator.item(at: from, didMoveTo: to)
                try? LocalFiles.flush(PathBytes.path(of: from.deletingLastPathComponent()))
                try LocalFiles.flush(PathBytes.path(of: to.deletingLastPathComponent()))
                return LocalScanner.fingerprint(toPath)
            }
        } catch let error as SyncStepError {
            throw error
        } catch {
            throw .local(path: destination, reason: "coordinated move failed: \(error)")
        }
    }

    /// Inside a coordinated delete (`.forDeleting`) of the item: deletes a file only while it
    /// still has the fingerprint `expected`, a folder only when nothing but names the agent
    /// never syncs is left in it. Returns whether it is gone.
    func delete(_ path: String, isFolder: Bool, expected: LocalFingerprint?) throws(SyncStepError) -> Bool {
        try checkFolders(of: path)
        return try coordinated("coordinated delete", path) {
            try coordinator().coordinate(writingItemAt: url(path), options: .forDeleting) { actual throws(SyncStepError) -> Bool in
                let actualPath = PathBytes.path(of: actual)
                guard let now = LocalScanner.fingerprint(actualPath) else { return true }
                if isFolder {
                    // Never through a link: a folder replaced by a symbolic link is left alone,
                    // and only what is really inside the folder is looked at and removed.
                    guard let names = Self.entryNames(ofFolder: actualPath) else { return false }
                    guard names.allSatisfy(SyncExclusions.excludes) else { return false }
                    for name in names { _ = POSIX.removeTree(actualPath + "/" + name) }
                    guard rmdir(actualPath) == 0 else { return false }
                } else {
                    guard now == expected else { return false }
                    guard unlink(actualPath) == 0 else { throw .local(path: path, reason: Errno.current.message) }
                }
                try? LocalFiles.flush(PathBytes.path(of: actual.deletingLastPathComponent()))
                return true
            }
        }
    }
}

extension LocalCoordination {
    /// The names in the folder at `path`, opened with `O_NOFOLLOW | O_DIRECTORY` (so a symbolic
    /// link, even to a folder, gives `nil`); names that are not UTF-8 count as synced names.
    static func entryNames(ofFolder path: String) -> [String]? {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard case .success(let names) = FolderEntries.names(inFolder: descriptor) else { return nil }
        return names.map { String(validating: $0, as: UTF8.self) ?? "\u{FFFD}not-utf8" }
    }
}
