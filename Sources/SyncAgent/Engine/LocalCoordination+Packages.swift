import CloudDocuments
import FileCoordination
import Foundation
import Glibc
import SystemSupport

// Package documents: each operation is one coordinated access of the whole package folder (with
// the package's extension registered, presenters of items inside it are reached too).
extension LocalCoordination {
    /// Inside a coordinated read of the package (an open document with unsaved changes saves
    /// first), copies its tree to the new folder `snapshot`. Returns the package fingerprint of
    /// what was copied, `nil` when the package is missing; throws when it is not a folder, changed
    /// during the copy, or cannot be read.
    func snapshotPackage(_ path: String, to snapshot: URL) throws(SyncStepError) -> LocalFingerprint? {
        try checkFolders(of: path)
        let snapshotPath = PathBytes.path(of: snapshot)
        return try coordinated("coordinated read", path) {
            try coordinator().coordinate(readingItemAt: url(path)) { actual throws(SyncStepError) -> LocalFingerprint? in
                let actualPath = PathBytes.path(of: actual)
                var info = stat()
                guard lstat(actualPath, &info) == 0 else { return nil }
                guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .local(path: path, reason: "not a package folder") }
                return try PackageTree.copy(actualPath, to: snapshotPath, path: path)
            }
        }
    }

    /// Inside one plain coordinated write of the package: checks it still has the package
    /// fingerprint `expected` (`nil`: still missing); then — when `conflictContents` (a folder)
    /// is given — moves it into the version store as an unresolved conflict version of the
    /// package; then puts the complete, flushed folder `temporary` in place in one step: a
    /// `renameat2(RENAME_EXCHANGE)` swap with the old package (whose tree, now under the temporary
    /// name, is removed afterwards), or a `RENAME_NOREPLACE` rename when there was none. Readers
    /// never see half a package. Open documents reload; one with unsaved changes keeps them (as
    /// for files: a plain write, not `.forReplacing`).
    func placePackage(_ temporary: URL, at path: String, expected: LocalFingerprint?,
                      conflictContents: URL? = nil) throws(SyncStepError) -> Placement {
        let target = try placementTarget(path)
        let temporaryPath = PathBytes.path(of: temporary)
        return try coordinated("coordinated write", path) {
            try coordinator().coordinate(writingItemAt: target) { actual throws(SyncStepError) -> Placement in
                let actualPath = PathBytes.path(of: actual)
                let now = PackageTree.fingerprint(actualPath)
                guard now == expected else { return .changedLocally }
                let versionID = try conflictContents.flatMap { contents throws(SyncStepError) in
                    expected == nil ? nil : try Self.keepConflictVersion(of: actual, contents: contents, path: path)
                }
                if expected != nil {
                    FileVersion.carryItemIdentity(from: actual, to: temporary)
                    switch RenameAt2.rename(temporaryPath, to: actualPath, flag: .exchange) {
                    case .success:
                        // The old package is now under the temporary name.
                        PackageTree.remove(temporaryPath)
                    case .failure(let error) where RenameAt2.isUnsupported(error):
                        // No exchange here: the old package goes aside for an instant, then away.
                        let aside = temporaryPath + ".old"
                        guard Glibc.rename(actualPath, aside) == 0 else {
                            throw .local(path: path, reason: "cannot move the old package aside: \(Errno.current.message)")
                        }
                        guard Glibc.rename(temporaryPath, actualPath) == 0 else {
                            let failure = Errno.current
                            _ = Glibc.rename(aside, actualPath)
                            throw .local(path: path, reason: "cannot put the package in place: \(failure.message)")
                        }
                        PackageTree.remove(aside)
                    case .failure(let error):
                        throw .local(path: path, reason: "cannot put the package in place: \(error.message)")
                    }
                } else {
                    switch RenameAt2.rename(temporaryPath, to: actualPath, flag: .noReplace) {
                    case .success: break
                    case .failure(let error) where RenameAt2.isUnsupported(error):
                        guard Glibc.rename(temporaryPath, actualPath) == 0 else {
                            throw .local(path: path, reason: "cannot put the package in place: \(Errno.current.message)")
                        }
                    case .failure(let error) where error.rawValue == EEXIST:
                        return .changedLocally
                    case .failure(let error):
                        throw .local(path: path, reason: "cannot put the package in place: \(error.message)")
                    }
                }
                try LocalFiles.flush(PathBytes.path(of: actual.deletingLastPathComponent()))
                if expected == nil { Self.removePlaceholder(besideItemAt: actual) }  // an evicted package is back
                guard let placed = PackageTree.fingerprint(actualPath) else {
                    throw .local(path: path, reason: "vanished right after it was put in place")
                }
                return .placed(placed, conflictVersion: versionID)
            }
        }
    }

    /// Inside a coordinated delete of the package: removes its whole tree only while it still has
    /// the package fingerprint `expected` — first renamed to `removing` (a new name in the agent's
    /// transfers folder, on the same file system and emptied at every start), so no half-removed
    /// package is ever seen under its name, even after a crash. Returns whether it is gone.
    func deletePackage(_ path: String, expected: LocalFingerprint?, removing: URL) throws(SyncStepError) -> Bool {
        try checkFolders(of: path)
        return try coordinated("coordinated delete", path) {
            try coordinator().coordinate(writingItemAt: url(path), options: .forDeleting) { actual throws(SyncStepError) -> Bool in
                let actualPath = PathBytes.path(of: actual)
                guard let now = PackageTree.fingerprint(actualPath) else { return true }
                guard now == expected else { return false }
                let aside = PathBytes.path(of: removing)
                guard Glibc.rename(actualPath, aside) == 0 else { throw .local(path: path, reason: Errno.current.message) }
                try? LocalFiles.flush(PathBytes.path(of: actual.deletingLastPathComponent()))
                PackageTree.remove(aside)
                return true
            }
        }
    }
}
