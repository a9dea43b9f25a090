import Foundation
import Glibc
import SystemSupport

/// Tells a managed document at once when another device's log or baseline arrives in the
/// container: an ``InotifyLoop`` (SystemSupport's, the package's one inotify implementation)
/// watching the store's folder (`<container>/ManagedDocuments/<store>/`, where device folders
/// appear) and every other device's folder in it (where their files are renamed into place, as
/// Syncthing, rclone and this module's own writer do).
///
/// ``onChange`` is called on the loop's thread, at most once per turn of the loop (a burst of
/// files is one call), for: a log or baseline renamed or written into a device folder, a new
/// device folder, the store's folder removed or moved (a reset, seen by the next import), and a
/// lost kernel queue (`IN_Q_OVERFLOW`). It must not wait (the document only schedules an import).
///
/// What inotify cannot see — network and FUSE file systems whose changes come from elsewhere —
/// is left to the document's fallback poll (``ManagedDocument/importInterval``). While the store's
/// folder does not exist yet, the watch looks for it again every `retryInterval`.
final class LogFolderWatch: InotifyLoopClient {
    let root: String
    let device: String
    let retryInterval: Duration
    let onChange: @Sendable () -> Void
    private var rootWatch: Int32?
    /// Watch descriptor → device folder name.
    private var deviceWatches: [Int32: String] = [:]
    private var changed = false

    static let rootMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    static let deviceMask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    init(root: String, device: String, retryInterval: Duration, onChange: @escaping @Sendable () -> Void) {
        self.root = root
        self.device = device
        self.retryInterval = retryInterval
        self.onChange = onChange
    }

    /// Starts watching `folder` on a loop thread of its own; `nil` when inotify is unavailable
    /// (the per-user instance limit: the fallback poll then does all the work).
    static func start(_ folder: LogFolder, retryInterval: Duration, onChange: @escaping @Sendable () -> Void) -> InotifyLoop? {
        guard let loop = try? InotifyLoop(name: "ManagedDocs.log") else { return nil }
        let root = folder.root.path, device = folder.device
        loop.start { _ in LogFolderWatch(root: root, device: device, retryInterval: retryInterval, onChange: onChange) }
        return loop
    }

    func inotifyLoopDidStart(_ loop: InotifyLoop) {
        watchFolders(loop)
    }

    func inotifyLoopDeadline(_ loop: InotifyLoop) -> ContinuousClock.Instant? {
        rootWatch == nil ? .now + retryInterval : nil
    }

    func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {
        for event in events {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                changed = true
                continue
            }
            if event.mask & UInt32(IN_IGNORED) != 0 {
                if event.descriptor == rootWatch { rootWatch = nil }
                deviceWatches[event.descriptor] = nil
                continue
            }
            if event.descriptor == rootWatch {
                // A device folder appeared (its files may be in it already), or the store's
                // folder itself went away (a reset).
                changed = true
                if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    loop.removeWatch(event.descriptor)
                    rootWatch = nil
                }
            } else if deviceWatches[event.descriptor] != nil {
                if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    loop.removeWatch(event.descriptor)
                    deviceWatches[event.descriptor] = nil
                    changed = true
                } else if LogFolder.entry(device: "", fileName: event.name) != nil {
                    changed = true
                }
            }
        }
    }

    func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {
        // New folders (and, after a lost queue or a reset, all of them) are watched again
        // before the document looks: a file arriving in between is seen by its import.
        if changed || rootWatch == nil { watchFolders(loop) }
        if changed {
            changed = false
            onChange()
        }
    }

    /// Watches the store's folder and every other device's folder in it not watched yet.
    private func watchFolders(_ loop: InotifyLoop) {
        if rootWatch == nil {
            guard case .success(let descriptor) = loop.addWatch(root, mask: Self.rootMask) else { return }
            rootWatch = descriptor
            changed = true  // whatever arrived before the watch
        }
        let watched = Set(deviceWatches.values)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for name in names where name != device && !watched.contains(name) && DeviceIdentifierRules.isValid(name) {
            if case .success(let descriptor) = loop.addWatch(root + "/" + name, mask: Self.deviceMask) {
                deviceWatches[descriptor] = name
                changed = true
            }
        }
    }
}
