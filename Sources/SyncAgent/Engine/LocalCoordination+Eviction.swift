import FileCoordination
import Foundation
import Glibc
import SystemSupport
import Ubiquity

extension LocalCoordination {
    /// What an eviction found.
    enum Eviction: Sendable {
        /// The placeholder is in place and the file is gone.
        case evicted
        /// The file is not the bytes the agent last synced (a change not uploaded yet — also a
        /// document with unsaved changes, which saved first): nothing was changed.
        case notUploaded
        /// Nothing is there to evict.
        case missing
    }

    /// Inside a coordinated write with `.forEvicting` — so every presenter of the file, in any
    /// process, is asked `accommodatePresentedItemEviction` first (an open document with unsaved
    /// changes refuses and keeps them; a clean one closes; one refusal refuses the eviction) —
    /// evicts the file at `path` if it still has the fingerprint `expected`: writes its
    /// placeholder (durably, before anything is removed), then removes the file and flushes the
    /// folder. A crash in between leaves both, and the file wins. A file already changed since
    /// its upload is refused before any presenter is asked (and checked again inside).
    func evict(_ path: String, expected: LocalFingerprint?, remoteTag: String?) throws(SyncStepError) -> Eviction {
        try checkFolders(of: path)
        var before = stat()
        guard lstat(PathBytes.path(of: url(path)), &before) == 0 else { return .missing }
        guard (before.st_mode & S_IFMT) == S_IFREG, LocalFingerprint(before) == expected else { return .notUploaded }
        return try coordinated("coordinated eviction", path) {
            try coordinator().coordinate(writingItemAt: url(path), options: .forEvicting) { actual throws(SyncStepError) -> Eviction in
                let actualPath = PathBytes.path(of: actual)
                var info = stat()
                guard lstat(actualPath, &info) == 0 else { return .missing }
                guard (info.st_mode & S_IFMT) == S_IFREG, LocalFingerprint(info) == expected else { return .notUploaded }
                let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
                let placeholder = ItemPlaceholder(name: actual.lastPathComponent, size: Int64(info.st_size),
                                                  modificationDate: modified, remoteTag: remoteTag)
                do {
                    try placeholder.write(besideItemAt: actual)
                } catch {
                    throw .local(path: path, reason: error.localizedDescription)
                }
                guard unlink(actualPath) == 0 else {
                    let reason = Errno.current.message
                    try? ItemPlaceholder.remove(forItemAt: actual)
                    throw .local(path: path, reason: reason)
                }
                try? LocalFiles.flush(PathBytes.path(of: actual.deletingLastPathComponent()))
                return .evicted
            }
        }
    }
}

extension LocalCoordination {
    /// Evicts the package document at `path` as one unit, inside one coordinated write of the
    /// whole package with `.forEvicting` (presenters of the package and of everything inside it
    /// accommodate the eviction, or refuse it; see ``evict(_:expected:remoteTag:)``): when it still has
    /// the package fingerprint `expected`, writes its placeholder (`isPackage`, the size of all
    /// its files; durably, first), then renames the package folder to `removing` (a new name in
    /// the agent's transfers folder, same file system, emptied at every start) and removes it
    /// there. So its real name holds the whole package or nothing — never half of one — and a
    /// crash leaves the package, or its placeholder, or both (the package wins).
    func evictPackage(_ path: String, expected: LocalFingerprint?, remoteTag: String?,
                      removing: URL) throws(SyncStepError) -> Eviction {
        try checkFolders(of: path)
        guard let current = PackageTree.fingerprint(PathBytes.path(of: url(path))) else { return .missing }
        guard current == expected else { return .notUploaded }
        return try coordinated("coordinated eviction", path) {
            try coordinator().coordinate(writingItemAt: url(path), options: .forEvicting) { actual throws(SyncStepError) -> Eviction in
                let actualPath = PathBytes.path(of: actual)
                var info = stat()
                guard lstat(actualPath, &info) == 0 else { return .missing }
                // The package fingerprint holds the total size of its files and the latest date.
                guard (info.st_mode & S_IFMT) == S_IFDIR, let now = PackageTree.fingerprint(actualPath), now == expected else {
                    return .notUploaded
                }
                let size = now.size
                let seconds = Double(now.modifiedNanoseconds) / 1e9
                let placeholder = ItemPlaceholder(name: actual.lastPathComponent, size: size,
                                                  modificationDate: Date(timeIntervalSince1970: seconds),
                                                  isPackage: true, remoteTag: remoteTag)
                do {
                    try placeholder.write(besideItemAt: actual)
                } catch {
                    throw .local(path: path, reason: error.localizedDescription)
                }
                let aside = PathBytes.path(of: removing)
                guard Glibc.rename(actualPath, aside) == 0 else {
                    let reason = Errno.current.message
                    try? ItemPlaceholder.remove(forItemAt: actual)
                    throw .local(path: path, reason: reason)
                }
                try? LocalFiles.flush(PathBytes.path(of: actual.deletingLastPathComponent()))
                PackageTree.remove(aside)
                return .evicted
            }
        }
    }
}
