import Foundation
import Glibc
import SystemSupport

/// The container as the last scan left it, brought up to date from a ``LocalChangeLog``: only the
/// folders the watcher reported are read again (`lstat` of their direct entries), a new folder is
/// walked whole, and everything else is taken from the last scan. A full scan
/// (``LocalScanner/scan(_:)``) happens at the first pass, whenever the log asks for one, and
/// always when there is no log (no inotify: polls alone find changes). Any thread; owned by one
/// engine pass at a time.
struct LocalScanState: Sendable {
    private var items: [String: LocalItem] = [:]
    private var skipped: [String: String] = [:]
    /// Paths whose state is unknown since the last update (see ``LocalScan/uncertain``).
    private var uncertain: Set<String> = []
    private var hasScanned = false
    /// Entries `lstat`-ed by the last ``update(_:pending:)`` (for tests and the cost it shows).
    private(set) var lastExamined = 0
    /// Whether the last update was a full scan.
    private(set) var lastWasFull = false

    /// The container now. `pending` is what the watcher marked since the last update (`nil`: no
    /// watcher, so a full scan).
    mutating func update(_ root: URL, pending: LocalChangeLog.Pending?) -> LocalScan {
        guard hasScanned, let pending, !pending.full else { return fullScan(root) }
        let rootPath = PathBytes.path(of: root)
        var info = stat()
        guard lstat(rootPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            hasScanned = false
            return LocalScan(items: nil)
        }
        lastExamined = 0
        lastWasFull = false
        uncertain = []
        for subtree in pending.subtrees.sorted() where !subtree.isEmpty { rescanSubtree(subtree, rootPath: rootPath) }
        for folder in pending.folders.sorted() { rescanFolder(folder, rootPath: rootPath) }
        return LocalScan(items: items, skipped: skipped.map { ($0.key, $0.value) }, uncertain: uncertain.sorted())
    }

    private mutating func fullScan(_ root: URL) -> LocalScan {
        let scan = LocalScanner.scan(root)
        lastExamined = scan.examined
        lastWasFull = true
        hasScanned = scan.items != nil
        items = scan.items ?? [:]
        uncertain = Set(scan.uncertain)
        skipped = Dictionary(scan.skipped.map { ($0.path, $0.reason) }, uniquingKeysWith: { first, _ in first })
        return scan
    }

    /// Reads `folder`'s direct entries again; a child folder that is new (or another folder under
    /// the same name: another inode) is walked whole, one that was known keeps what is below it
    /// (its own watch reports its changes).
    private mutating func rescanFolder(_ folder: String, rootPath: String) {
        if !folder.isEmpty, items[folder]?.isFolder != true { return }  // unknown: its parent's rescan finds it
        var found: [(path: String, reason: String)] = []
        let listed = LocalScanner.entries(of: folder, rootPath: rootPath, skipped: &found)
        lastExamined += listed?.count ?? 0
        for key in skipped.keys where Self.parent(of: key) == folder { skipped[key] = nil }
        for (path, reason) in found { skipped[path] = reason }
        let old = items.keys.filter { Self.parent(of: $0) == folder }
        guard let listed else {
            // Cannot be read now: what was known below it stays as it was, and nothing there
            // counts as deleted (the planner plans nothing for it).
            uncertain.insert(folder)
            return
        }
        let present = Dictionary(listed.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        for path in old where present[path] == nil { removeSubtree(path) }
        for item in listed {
            let before = items[item.path]
            if item.isFolder, before?.isFolder != true || before?.fingerprint.inode != item.fingerprint.inode {
                removeSubtree(item.path)
                items[item.path] = item
                walk(item.path, rootPath: rootPath)
            } else {
                if before?.isFolder == true, !item.isFolder { removeSubtree(item.path) }
                items[item.path] = item
            }
        }
    }

    /// Walks `folder` and everything below it again (its own entry is read too).
    private mutating func rescanSubtree(_ folder: String, rootPath: String) {
        removeSubtree(folder)
        var ignored: [(path: String, reason: String)] = []
        guard let parentItems = LocalScanner.entries(of: Self.parent(of: folder), rootPath: rootPath, skipped: &ignored),
              let item = parentItems.first(where: { $0.path == folder }) else { return }
        lastExamined += parentItems.count
        items[folder] = item
        if item.isFolder { walk(folder, rootPath: rootPath) }
    }

    /// Adds everything below `folder` (a full scan of that folder).
    private mutating func walk(_ folder: String, rootPath: String) {
        let scan = LocalScanner.scan(URL(fileURLWithPath: rootPath + "/" + folder, isDirectory: true))
        lastExamined += scan.examined
        for path in scan.uncertain { uncertain.insert(path.isEmpty ? folder : folder + "/" + path) }
        for (path, item) in scan.items ?? [:] {
            let full = folder + "/" + path
            items[full] = LocalItem(path: full, isFolder: item.isFolder, fingerprint: item.fingerprint)
        }
        for (path, reason) in scan.skipped { skipped[path.isEmpty ? folder : folder + "/" + path] = reason }
    }

    /// Forgets `path` and everything below it.
    private mutating func removeSubtree(_ path: String) {
        items[path] = nil
        let prefix = path + "/"
        for key in items.keys where key.hasPrefix(prefix) { items[key] = nil }
        for key in skipped.keys where key == path || key.hasPrefix(prefix) { skipped[key] = nil }
    }

    /// The folder `path` is in (`""` for the container itself).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }
}
