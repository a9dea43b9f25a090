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

    /// Inside a coordinated write with `.forMerging` — so open documents in any process save
    /// their unsaved changes first, and the others relinquish (and close when they find their
    /// file gone) — evicts the file at `path` if it still has the fingerprint `expected`: writes
    /// its placeholder (durably, before anything is removed), then removes the file and flushes
    /// the folder. A crash in between leaves both, and the file wins.
    func evict(_ path: String, expected: LocalFingerprint?, remoteTag: String?) throws(SyncStepError) -> Eviction {
        try checkFolders(of: path)
        return try coordinated("coordinated eviction", path) {
            try coordinator().coordinate(writingItemAt: url(path), options: .forMerging) { actual throws(SyncStepError) -> Eviction in
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
