import Foundation
import Glibc
import FileCoordination
import SystemSupport

/// Watches a store folder with `inotify` and calls `onChange` (on its own thread) after each batch
/// of the kernel's reports that touch a name that matters (``KeyValueStoreFolder/matters(_:)``):
/// a device file written in place or renamed into place (`SafeSave`, Syncthing), created,
/// deleted, or a conflict copy appearing. Like the coordination change monitor
/// (FileCoordination's ChangeMonitor) it watches the *folder*, since files are replaced by
/// rename; unlike it, it watches one folder for one store and needs no stamps: the store
/// compares file identities itself when it re-reads.
///
/// If the kernel's queue overflows (`IN_Q_OVERFLOW`), `onChange` is called too: the store then
/// re-reads every file whose identity changed, so nothing is missed. If the folder itself is
/// deleted or moved away, it is made again where it belongs (as the store makes it) and watched
/// there, then `onChange` is called.
///
/// One ``InotifyLoop`` per watcher (thread `Ubiquity.KeyValueStore.watcher`, asleep in `poll` on
/// the inotify descriptor and the loop's wake channel); `onChange` runs on that thread, once per
/// turn of the loop whose reports mattered (the queue is read until empty first). `stop()` (or
/// deinit) stops the loop without waiting: it ends after an `onChange` in progress, and its
/// descriptors are closed once both this watcher and the loop's thread are done with them.
final class KeyValueStoreWatcher: Sendable {
    private let loop: InotifyLoop

    /// Starts watching `folderPath`; `nil` when inotify is unavailable or the folder cannot be
    /// watched (the store then sees changes only when it synchronizes).
    init?(folderPath: String, onChange: @escaping @Sendable () -> Void) {
        guard let loop = try? InotifyLoop(name: "Ubiquity.KeyValueStore.watcher"),
              case .success(let watch) = loop.addWatch(folderPath, mask: Self.events) else { return nil }
        self.loop = loop
        loop.start { _ in Client(folderPath: folderPath, watch: watch, onChange: onChange) }
    }

    /// Ends the watching thread (without waiting for it). Idempotent; any thread, the watcher's
    /// own (inside `onChange`) included.
    func stop() { loop.stop() }

    deinit { stop() }

    private static let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
                                       | IN_DELETE_SELF | IN_MOVE_SELF)

    /// What the loop's thread keeps: the folder's watch and what the turn's reports said.
    private final class Client: InotifyLoopClient {
        let folderPath: String
        let onChange: @Sendable () -> Void
        var watch: Int32
        var relevant = false
        var folderGone = false

        init(folderPath: String, watch: Int32, onChange: @escaping @Sendable () -> Void) {
            self.folderPath = folderPath
            self.watch = watch
            self.onChange = onChange
        }

        func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
            loop.assertInLoop()
            for event in events {
                if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0, event.descriptor == watch {
                    relevant = true
                    folderGone = true
                } else if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    relevant = true
                } else if !event.name.isEmpty, KeyValueStoreFolder.matters(event.name) {
                    relevant = true
                }
            }
        }

        /// After the turn's reads (the whole queue): the folder watched again where it belongs if
        /// it went, then `onChange` if anything mattered.
        func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {
            loop.assertInLoop()
            if folderGone {
                // Deleted (the kernel dropped the watch) or moved away (the watch follows it).
                loop.removeWatch(watch)
                try? FileManager.default.createDirectory(at: PathBytes.fileURL(folderPath, isDirectory: true),
                                                         withIntermediateDirectories: true)
                watch = (try? loop.addWatch(folderPath, mask: KeyValueStoreWatcher.events).get()) ?? -1
            }
            let changed = relevant
            relevant = false
            folderGone = false
            if changed { onChange() }
        }
    }
}
