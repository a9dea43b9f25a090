import CSystemShim
import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// The item itself, open for an upload read straight from it (no copy): the descriptor was
/// opened inside a coordinated read, and `fingerprint` is what it was then. Closed when released.
///
/// `@unchecked Sendable`: its state is immutable after `init` (a descriptor number and a value);
/// the descriptor is only read with `pread`/`fstat`, which any thread may do at once.
final class OpenUploadItem: @unchecked Sendable {
    let descriptor: Int32
    let fingerprint: LocalFingerprint

    init(descriptor: Int32, fingerprint: LocalFingerprint) {
        self.descriptor = descriptor
        self.fingerprint = fingerprint
    }

    deinit { close(descriptor) }

    /// The path that opens this very file (not whatever has its name now), for a reader that
    /// takes a path: `/proc/self/fd/N` reopens the open file's inode.
    var procPath: String { "/proc/self/fd/\(descriptor)" }

    /// Whether the open file still has the fingerprint it had inside the coordinated read (size,
    /// times, inode; a write to it changes its ctime).
    var isUnchanged: Bool {
        var now = stat()
        return fstat(descriptor, &now) == 0 && LocalFingerprint(now) == fingerprint
    }
}

extension LocalCoordination {
    /// What an upload reads.
    enum UploadSource: Sendable {
        /// A stable copy at the snapshot path (a reflink where the file system shares blocks,
        /// else a copy), with the fingerprint of the item it was taken from.
        case snapshot(LocalFingerprint)
        /// The item itself, open: read in place, and checked unchanged while read.
        case item(OpenUploadItem)
    }

    /// Inside a coordinated read of the item (so an open document with unsaved changes, in any
    /// process, saves first), makes what an upload reads; `nil` when the item is missing:
    ///
    /// - a reflink (`FICLONE`: Btrfs, XFS) of it at `snapshot` when the file system shares
    ///   blocks: a stable copy for free;
    /// - else, when `readInPlace` (the uploader checks the file is unchanged after reading it and
    ///   before sending its last byte, see ``WebDAVStore/checksFileBodiesWhileSending``) and
    ///   `/proc/self/fd` can reopen it: the item itself, open — no copy of its bytes;
    /// - else a copy at `snapshot` (``snapshot(_:to:)``).
    ///
    /// Throws when it changed during the copy (a writer that does not coordinate) or cannot be read.
    func openForUpload(_ path: String, snapshot: URL, readInPlace: Bool) throws(SyncStepError) -> UploadSource? {
        try checkFolders(of: path)
        let snapshotPath = PathBytes.path(of: snapshot)
        return try coordinated("coordinated read", path) {
            try coordinator().coordinate(readingItemAt: url(path)) { actual throws(SyncStepError) -> UploadSource? in
                let actualPath = PathBytes.path(of: actual)
                guard let descriptor = try Self.openForReading(actualPath, path: path) else { return nil }
                var keep = false
                defer { if !keep { close(descriptor) } }
                var before = stat()
                guard fstat(descriptor, &before) == 0, (before.st_mode & S_IFMT) == S_IFREG else {
                    throw .local(path: path, reason: "not a regular file")
                }
                let fingerprint = LocalFingerprint(before)
                guard LocalScanner.fingerprint(actualPath) == fingerprint else {
                    throw .local(path: path, reason: "changed while it was read (a writer that does not coordinate): retried later")
                }
                if LocalFiles.reflink(from: descriptor, to: snapshotPath) {
                    var after = stat()
                    guard fstat(descriptor, &after) == 0, LocalFingerprint(after) == fingerprint else {
                        throw .local(path: path, reason: "changed while it was read (a writer that does not coordinate): retried later")
                    }
                    return .snapshot(fingerprint)
                }
                if readInPlace, access("/proc/self/fd/\(descriptor)", R_OK) == 0 {
                    keep = true
                    return .item(OpenUploadItem(descriptor: descriptor, fingerprint: fingerprint))
                }
                try LocalFiles.copy(from: descriptor, to: snapshotPath)
                var after = stat()
                guard fstat(descriptor, &after) == 0, LocalFingerprint(after) == fingerprint,
                      LocalScanner.fingerprint(actualPath) == fingerprint else {
                    throw .local(path: path, reason: "changed while it was read (a writer that does not coordinate): retried later")
                }
                return .snapshot(fingerprint)
            }
        }
    }
}
