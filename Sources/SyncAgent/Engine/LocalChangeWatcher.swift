import Foundation
import Glibc
import SystemSupport

/// Tells the engine soon after something changes in the container, so a local edit is synced
/// without waiting for the next poll: an ``InotifyLoop`` watching every folder of the container
/// (folders made later are added as they appear). It only *triggers* passes — what changed is
/// still found by the pass's scan against the journal, so a lost or overflowing report costs
/// nothing but the wait for the next poll. Reports are gathered for ``settleDelay`` after the
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
    init(root: URL, changed: @escaping @Sendable () -> Void) throws(InotifyLoop.SetupError) {
        loop = try InotifyLoop(name: "clouddocsd.local")
        let path = PathBytes.path(of: root)
        loop.start { _ in Client(root: path, changed: changed) }
    }

    /// Stops the loop and waits for its thread to end (it ends within one turn).
    func stop() {
        loop.stop()
        loop.join()
    }

    private final class Client: InotifyLoopClient {
        static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
            | IN_DELETE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
        let root: String
        let changed: @Sendable () -> Void
        /// Watch descriptor → the folder's path.
        var folders: [Int32: String] = [:]
        var deadline: ContinuousClock.Instant?

        init(root: String, changed: @escaping @Sendable () -> Void) {
            self.root = root
            self.changed = changed
        }

        func inotifyLoopDidStart(_ loop: InotifyLoop) { watchTree(root, loop) }

        func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant? { deadline }

        func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
            var relevant = false
            for event in events {
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true; continue }
                if event.mask & UInt32(IN_IGNORED) != 0 { folders[event.descriptor] = nil; continue }
                guard let folder = folders[event.descriptor] else { continue }
                if !event.name.isEmpty, SyncExclusions.excludes(event.name) { continue }
                relevant = true
                let isNewFolder = event.mask & UInt32(IN_ISDIR) != 0 && event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0
                if isNewFolder { watchTree(folder + "/" + event.name, loop) }
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
            while let folder = pending.popLast(), folders.count < LocalChangeWatcher.maximumWatches {
                guard case .success(let descriptor) = loop.addWatch(folder, mask: Self.mask) else { continue }
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
