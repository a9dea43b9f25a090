import Foundation
import Glibc
import SystemSupport

/// Plain operations on a local package folder's tree (no coordination: callers hold the
/// coordinated access). Symbolic links are never followed (`lstat`, `O_NOFOLLOW`) and, like the
/// scan, never part of a package's sync; names the agent never syncs are left out. Any thread.
enum PackageTree {
    /// The inner items of the folder at `path`, relative to it, as the scan would see them; `nil`
    /// when `path` is not a folder (or cannot be listed).
    static func items(of path: String) -> [(relative: String, item: LocalItem)]? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        var found: [(String, LocalItem)] = []
        var pending = [""]
        var skipped: [(path: String, reason: String)] = []
        while let relative = pending.popLast() {
            guard let listed = LocalScanner.entries(of: relative, rootPath: path, skipped: &skipped) else { return nil }
            for item in listed {
                found.append((item.path, item))
                if item.isFolder { pending.append(item.path) }
                if found.count > LocalScanner.maximumItems { return nil }
            }
        }
        return found
    }

    /// The package fingerprint of the item at `path` now (``PackageFingerprint/local(folderInode:inner:)``),
    /// the plain `lstat` fingerprint when it is not a folder, `nil` when missing.
    static func fingerprint(_ path: String) -> LocalFingerprint? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFDIR, let inner = items(of: path) else { return LocalFingerprint(info) }
        return PackageFingerprint.local(folderInode: UInt64(info.st_ino), inner: inner)
    }

    /// Copies the package at `source` to the new folder `destination` (files, folders and their
    /// permission bits; links and excluded names left out), flushed. Returns the fingerprint of
    /// what was copied; throws when the package changed during the copy or cannot be read.
    static func copy(_ source: String, to destination: String, path: String) throws(SyncStepError) -> LocalFingerprint {
        guard let before = fingerprint(source), let inner = items(of: source) else {
            throw .local(path: path, reason: "the package cannot be read")
        }
        try makeFolder(destination, path: path)
        for (relative, item) in inner.sorted(by: { $0.relative < $1.relative }) {
            let target = destination + "/" + relative
            if item.isFolder {
                try makeFolder(target, path: path)
                continue
            }
            let descriptor = open(source + "/" + relative, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw .local(path: path, reason: "\(relative): \(Errno.current.message)") }
            defer { close(descriptor) }
            try LocalFiles.copy(from: descriptor, to: target)
            var info = stat()
            if fstat(descriptor, &info) == 0 { _ = chmod(target, info.st_mode & 0o777) }
        }
        try flush(destination, path: path)
        guard fingerprint(source) == before else {
            throw .local(path: path, reason: "the package changed while it was read (a writer that does not coordinate): retried later")
        }
        return before
    }

    /// `fsync` of every file and folder in the tree at `root` (and `root`).
    static func flush(_ root: String, path: String) throws(SyncStepError) {
        guard let inner = items(of: root) else { throw .local(path: path, reason: "cannot read the package copy") }
        for (relative, _) in inner { try LocalFiles.flush(root + "/" + relative) }
        try LocalFiles.flush(root)
    }

    /// Whether the trees at `first` and `second` hold the same names, kinds and bytes.
    static func haveSameContents(_ first: String, _ second: String) -> Bool {
        guard let a = items(of: first), let b = items(of: second), a.count == b.count else { return false }
        let kinds = Dictionary(b.map { ($0.relative, $0.item.isFolder) }, uniquingKeysWith: { first, _ in first })
        for (relative, item) in a {
            guard kinds[relative] == item.isFolder else { return false }
            if !item.isFolder, !LocalFiles.haveSameContents(first + "/" + relative, second + "/" + relative) { return false }
        }
        return true
    }

    /// Makes the folder `folder` (mode 0755 less the umask; the parent must exist; an existing
    /// folder is fine).
    static func makeFolder(_ folder: String, path: String) throws(SyncStepError) {
        guard mkdir(folder, 0o755) == 0 || errno == EEXIST else {
            throw .local(path: path, reason: "cannot make \(folder): \(Errno.current.message)")
        }
    }

    /// Removes the tree at `path` without following links (best effort).
    static func remove(_ path: String) { _ = POSIX.removeTree(path) }
}
