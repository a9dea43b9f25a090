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
/// One thread per watcher, asleep in `poll` on the inotify descriptor and a pipe; `stop()` (or
/// deinit) writes to the pipe, and the thread closes the inotify descriptor and ends. The pipe is
/// closed when both the watcher and its thread are done with it.
final class KeyValueStoreWatcher: Sendable {
    private let wake: WakePipe

    /// Starts watching `folderPath`; `nil` when inotify is unavailable or the folder cannot be
    /// watched (the store then sees changes only when it synchronizes).
    init?(folderPath: String, onChange: @escaping @Sendable () -> Void) {
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { return nil }
        let watch = Self.addWatch(inotify, folderPath)
        guard watch >= 0, let wake = WakePipe() else {
            close(inotify)
            return nil
        }
        self.wake = wake
        let thread = Thread { Self.run(inotify: inotify, folderPath: folderPath, watch: watch, wake: wake, onChange: onChange) }
        thread.name = "Ubiquity.KeyValueStore.watcher"
        thread.start()
    }

    /// Ends the watching thread. Idempotent.
    func stop() { wake.signal() }

    deinit { stop() }

    /// A pipe whose one byte tells the thread to end.
    private final class WakePipe: Sendable {
        let readEnd: Int32
        private let writeEnd: Int32
        private let signalled = Locked(false)

        init?() {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { return nil }
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
            readEnd = ends[0]
            writeEnd = ends[1]
        }

        func signal() {
            guard signalled.withLock({ already in defer { already = true }; return !already }) else { return }
            var byte: UInt8 = 1
            _ = write(writeEnd, &byte, 1)
        }

        deinit {
            close(readEnd)
            close(writeEnd)
        }
    }

    private static func addWatch(_ inotify: Int32, _ folderPath: String) -> Int32 {
        let events = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
        return PathBytes.withCString(folderPath) { inotify_add_watch(inotify, $0, events) }
    }

    private static func run(inotify: Int32, folderPath: String, watch: Int32, wake: WakePipe, onChange: @Sendable () -> Void) {
        defer { close(inotify) }
        var watch = watch
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = retryingOnInterrupt { poll(&descriptors, 2, -1) }
            if ready < 0 || descriptors[1].revents != 0 { return }
            var relevant = false
            var folderGone = false
            while true {
                let count = read(inotify, buffer, size)
                if count <= 0 { break }
                for event in InotifyEvent.decode(buffer, count: count) {
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
            if folderGone {
                // Deleted (the kernel dropped the watch) or moved away (the watch follows it).
                inotify_rm_watch(inotify, watch)
                try? FileManager.default.createDirectory(at: PathBytes.fileURL(folderPath, isDirectory: true),
                                                         withIntermediateDirectories: true)
                watch = addWatch(inotify, folderPath)
            }
            if relevant { onChange() }
        }
    }
}
