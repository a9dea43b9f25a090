import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// What one walk of the container folder found.
public struct LocalScan: Sendable {
    /// The items by container-relative path, or `nil` when the container folder is missing.
    public var items: [String: LocalItem]?
    /// Symbolic links (never followed, never synced), names that are not UTF-8, and other items
    /// that cannot be synced, with why.
    public var skipped: [(path: String, reason: String)] = []
    /// How many entries were `lstat`-ed.
    public var examined = 0
    /// Paths whose state here is unknown — a folder that could not be listed, an entry that could
    /// not be examined, `""` (everything) when the walk was cut: nothing under them is missing
    /// "because it was deleted", so the planner deletes nothing on the server for them.
    public var uncertain: [String] = []
}

/// Walks a container folder with `lstat` only (no file is opened, no link followed): the cheap
/// half of "what changed here" (the journal's fingerprints are the other half). Any thread.
enum LocalScanner {
    /// The largest tree walked (a bigger one is cut, and the cut reported as skipped).
    static let maximumItems = 1_000_000

    static func scan(_ root: URL) -> LocalScan {
        let rootPath = PathBytes.path(of: root)
        var info = stat()
        guard lstat(rootPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return LocalScan(items: nil) }
        var scan = LocalScan(items: [:])
        var items: [String: LocalItem] = [:]
        var pending: [String] = [""]
        while let relative = pending.popLast() {
            guard let listed = entries(of: relative, rootPath: rootPath, skipped: &scan.skipped) else {
                scan.uncertain.append(relative)
                continue
            }
            scan.examined += listed.count
            for item in listed {
                items[item.path] = item
                if item.isFolder { pending.append(item.path) }
                if items.count >= maximumItems {
                    scan.skipped.append((item.path, "more than \(maximumItems) items: the rest is not synced"))
                    scan.uncertain = [""]
                    scan.items = items
                    return scan
                }
            }
        }
        scan.items = items
        return scan
    }

    /// The files and folders directly in the container folder `relative` (`""`: the container),
    /// each `lstat`-ed once; what cannot be synced goes to `skipped`. `nil` when the folder cannot
    /// be opened (recorded in `skipped` too).
    static func entries(of relative: String, rootPath: String, skipped: inout [(path: String, reason: String)]) -> [LocalItem]? {
        let folder = relative.isEmpty ? rootPath : rootPath + "/" + relative
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            skipped.append((relative, "cannot be listed: \(Errno.current.message)"))
            return nil
        }
        defer { close(descriptor) }
        guard case .success(let names) = FolderEntries.names(inFolder: descriptor) else {
            skipped.append((relative, "cannot be listed"))
            return nil
        }
        var items: [LocalItem] = []
        for nameBytes in names {
            guard let name = String(validating: nameBytes, as: UTF8.self), RemotePath.isValidComponent(name) else {
                skipped.append((relative, "a name that is not UTF-8 is not synced"))
                continue
            }
            if SyncExclusions.excludes(name) { continue }
            let path = relative.isEmpty ? name : relative + "/" + name
            var entry = stat()
            guard fstatat(descriptor, name, &entry, AT_SYMLINK_NOFOLLOW) == 0 else {
                // Gone since the listing (a deletion the next pass sees), or not examinable now:
                // either way not "deleted" on this pass's word.
                skipped.append((path, "cannot be examined: \(Errno.current.message)"))
                continue
            }
            switch entry.st_mode & S_IFMT {
            case S_IFREG: items.append(LocalItem(path: path, isFolder: false, fingerprint: LocalFingerprint(entry)))
            case S_IFDIR: items.append(LocalItem(path: path, isFolder: true, fingerprint: LocalFingerprint(entry)))
            case S_IFLNK: skipped.append((path, "a symbolic link is never followed or synced"))
            default: skipped.append((path, "not a file or folder"))
            }
        }
        return items
    }

    /// The fingerprint of the item at `path` now (`nil` when missing), without following a link.
    static func fingerprint(_ path: String) -> LocalFingerprint? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return LocalFingerprint(info)
    }
}
