/// The evicted items this process is waiting to have downloaded (``EvictedItemResolution``), so
/// that the sync agent's landing write does not wait for this process's presenters of them.
///
/// The agent lands a download with a coordinated write, which asks the item's presenters in
/// every process to relinquish (or save) first. A presenter of the item in *this* process may
/// have the very queue that waits for the download — the main queue, when an app opens the
/// document synchronously on its main thread — and could answer only after the wait ends: the
/// agent would wait for the answer up to its limit (30 s). While a path is waited on here, such
/// requests from other processes for presenters at, above or inside it are answered at once as an
/// unanswered request would be (relinquished without a reacquirer; saved) without calling the
/// presenter: the item is not on disk, so there is nothing to relinquish or save. Notifications
/// (the change itself) are delivered as usual. Any thread.
enum DownloadWaits {
    /// Paths (canonical) being waited on, with how many waits each.
    private static let waiting = Locked<[String: Int]>([:])

    /// Runs `body` with `path` counted as waited on.
    static func waiting<T, E: Error>(for path: String, _ body: () throws(E) -> T) throws(E) -> T {
        waiting.withLock { $0[path, default: 0] += 1 }
        defer {
            waiting.withLock { waits in
                if let count = waits[path], count > 1 { waits[path] = count - 1 } else { waits.removeValue(forKey: path) }
            }
        }
        return try body()
    }

    /// Whether a presenter of `presentedPath` concerns an item being waited on: the item itself,
    /// a folder above it, or an item inside it (a folder brought back whole).
    static func concern(_ presentedPath: String) -> Bool {
        waiting.withLock { waits in
            guard !waits.isEmpty else { return false }
            return waits.keys.contains { path in
                path == presentedPath || CanonicalPath.isInside(path, presentedPath) || CanonicalPath.isInside(presentedPath, path)
            }
        }
    }
}
