import Foundation
import Glibc
import SystemSupport

/// The `inotify` watches of one query: one per folder under its scopes (inotify is not
/// recursive), by path and by watch descriptor, in the query's ``InotifyLoop``. Owned by the
/// query's thread (the loop's); unsynchronized.
struct WatchTable {
    let loop: InotifyLoop
    /// By exact bytes (``ExactName``): two folders whose names differ only in Unicode
    /// normalization are two watches.
    private(set) var byPath: [ExactName: Int32] = [:]
    private(set) var byDescriptor: [Int32: String] = [:]
    /// Why a folder could not be watched (the first failure; usually the per-user watch limit,
    /// `fs.inotify.max_user_watches`), or nil.
    private(set) var failure: String?

    /// Creations, deletions, both halves of renames, finished writes and attribute changes (a
    /// `touch`) of the folder's entries; the folder itself being moved; nothing through links.
    static let events = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB
                               | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)

    init(loop: InotifyLoop) {
        self.loop = loop
    }

    /// Watches `path` (again: the kernel answers the same descriptor for the same folder, which
    /// then stands for this path). False when it cannot be watched.
    @discardableResult
    mutating func add(_ path: String) -> Bool {
        let descriptor: Int32
        switch loop.addWatch(path, mask: Self.events) {
        case .success(let added): descriptor = added
        case .failure(let error):
            if failure == nil, error.rawValue != ENOENT, error.rawValue != ENOTDIR {
                failure = "\(PathBytes.display(path)) cannot be watched for changes: \(error)"
                    + (error.rawValue == ENOSPC ? " (raise fs.inotify.max_user_watches)" : "")
            }
            return false
        }
        let key = ExactName(path)
        if let old = byDescriptor[descriptor], ExactName(old) != key { byPath.removeValue(forKey: ExactName(old)) }
        if let oldDescriptor = byPath[key], oldDescriptor != descriptor { byDescriptor.removeValue(forKey: oldDescriptor) }
        byPath[key] = descriptor
        byDescriptor[descriptor] = path
        return true
    }

    func path(for descriptor: Int32) -> String? {
        byDescriptor[descriptor]
    }

    /// The kernel dropped the watch (its folder was deleted, or we removed it).
    mutating func forget(_ descriptor: Int32) {
        guard let path = byDescriptor.removeValue(forKey: descriptor) else { return }
        if byPath[ExactName(path)] == descriptor { byPath.removeValue(forKey: ExactName(path)) }
    }

    /// Stops watching `folder` and every folder inside it.
    mutating func removeSubtree(_ folder: String) {
        for (path, descriptor) in byPath where PathBytes.haveSameBytes(path.string, folder) || CanonicalPathSupport.isInside(path.string, folder) {
            loop.removeWatch(descriptor)
            byPath.removeValue(forKey: path)
            byDescriptor.removeValue(forKey: descriptor)
        }
    }

    /// Stops watching the folders not in `kept` (after a rescan).
    mutating func removeAll(except kept: Set<ExactName>) {
        for (path, descriptor) in byPath where !kept.contains(path) {
            loop.removeWatch(descriptor)
            byPath.removeValue(forKey: path)
            byDescriptor.removeValue(forKey: descriptor)
        }
    }
}
