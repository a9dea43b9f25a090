import Foundation
import Glibc
import SystemSupport

/// Tells the engine soon after something changes in the container, so a local edit is synced
/// without waiting for the next poll: an ``InotifyLoop`` watching every folder of the container
/// (folders made later are added as they appear). It triggers passes and tells them where to
/// look: every report marks its folder in the ``LocalChangeLog`` (a new folder is marked to be
/// walked whole once its watch is in place), so a pass reads only those folders
/// (``LocalScanState``). The log asks for a full scan until every watch is in place, after the
/// kernel's queue overflowed, and for good once a watch could not be added. Reports are gathered for ``settleDelay`` after the
/// last one (a save is several reports), then `changed` runs once, on the loop's thread; it must
/// not wait. Names the agent never syncs (lock and temporary files) do not count.
///
/// Sendable: the loop is thread-safe; the client lives on the loop's thread only.
final class LocalChangeWatcher: Sendable {
    /// How long reports are gathered before `changed` runs.
    static let settleDelay: Duration = .milliseconds(100)
    /// The most folders watched (the per-user inotify watch limit is shared with other programs).
    static let maximumWatches = 50_000

    private let loop: InotifyLoop

    /// Starts watching the folder at `root`. Throws when no inotify instance can be made (the
    /// per-user limit); then the engine relies on its polls.
    init(root: URL, log: LocalChangeLog, changed: @escaping @Sendable () -> Void) throws(InotifyLoop.SetupError) {
        loop = try InotifyLoop(name: "clouddocsd.local")
        let path = PathBytes.path(of: root)
        loop.start { _ in Client(root: path, log: log, changed: changed) }
    }

    /// Stops the loop and waits for its thread to end (it ends within one turn).
    func stop() {
        loop.stop()
        loop.join()
    }

    private final class Client: InotifyLoopClient {
        static let mask = UInt32(IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
            | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
        let root: String
        let log: LocalChangeLog
        let changed: @Sendable () -> Void
        /// Watch descriptor → the folder's path.
        var folders: [Int32: String] = [:]
        var deadline: ContinuousClock.Instant?

        init(root: String, log: LocalChangeLog, changed: @escaping @Sendable () -> Void) {
            self.root = root
            self.log = log
            self.changed = changed
        }

        func inotifyLoopDidStart(_ loop: InotifyLoop) {
            watchTree(root, loop)
            log.markReady()
        }

        /// `path` relative to the container (`""` for the container).
        private func relative(_ path: String) -> String {
            path == root ? "" : String(path.dropFirst(root.count + 1))
        }

        func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant? { deadline }

        func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
            loop.assertInLoop()
            var relevant = false
            for event in events {
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { log.markOverflow(); relevant = true; continue }
                if event.mask & UInt32(IN_IGNORED) != 0 { folders[event.descriptor] = nil; continue }
                guard let folder = folders[event.descriptor] else { continue }
                if !event.name.isEmpty, SyncExclusions.excludes(event.name) { continue }
                relevant = true
                log.markChanged(relative(folder))
                let isNewFolder = event.mask & UInt32(IN_ISDIR) != 0 && event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0
                if isNewFolder {
                    // Watched first, then walked by the pass: nothing made in it meanwhile is missed.
                    watchTree(folder + "/" + event.name, loop)
                    log.markSubtree(relative(folder + "/" + event.name))
                }
            }
            if relevant { deadline = .now + LocalChangeWatcher.settleDelay }
        }

        func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {
            guard let due = deadline, due <= .now else { return }
            deadline = nil
            changed()
        }

        /// Watches `path` and every folder below it (links are not followed).
        private func watchTree(_ path: String, _ loop: InotifyLoop) {
            var pending = [path]
            while let folder = pending.popLast() {
                guard folders.count < LocalChangeWatcher.maximumWatches else { log.markDegraded(); return }
                let descriptor: Int32
                switch loop.addWatch(folder, mask: Self.mask) {
                case .success(let added): descriptor = added
                case .failure(let error):
                    // Gone meanwhile: its parent's report covers it. Anything else: it is unwatched.
                    if error.rawValue != ENOENT && error.rawValue != ENOTDIR { log.markDegraded() }
                    continue
                }
                // A folder moved within the container keeps its watch: it gets its new path here.
                folders[descriptor] = folder
                let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                for name in names where !SyncExclusions.excludes(name) {
                    var info = stat()
                    if lstat(folder + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { pending.append(folder + "/" + name) }
                }
            }
        }
    }
}
