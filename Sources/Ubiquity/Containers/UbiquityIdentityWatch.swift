import Foundation
import Dispatch
import FileCoordination
import Glibc
import SystemSupport

extension UbiquityAccount {
    /// Apple's `NSUbiquityIdentityDidChange` (`"NSUbiquityIdentityDidChangeNotification"`; the
    /// FoundationCompatibility module also names it `Notification.Name.NSUbiquityIdentityDidChange`).
    ///
    /// Posted to `NotificationCenter.default`, with the account as `object` and no `userInfo`,
    /// when the account's configuration changes — the configuration file is created, edited,
    /// replaced or removed so that what it says is different (a new root, containers or provider,
    /// or it became unreadable or readable again) — while at least one
    /// ``beginObservingIdentityChanges()`` observation is alive. Read ``identityToken`` in the
    /// handler: `nil` means signed out.
    ///
    /// **Thread:** posted on the account's private serial queue `Ubiquity.identity` (not the main
    /// thread); `NotificationCenter` runs observers registered with `queue: nil` right there, so
    /// hop to the main actor to touch UI state, or register with `queue: .main`.
    public static let identityDidChangeNotification = Notification.Name("NSUbiquityIdentityDidChangeNotification")

    /// Starts watching the configuration for ``identityDidChangeNotification`` and keeps watching
    /// until the returned observation is cancelled or released (several observations share one
    /// watcher). Watching is one `inotify` watch on the configuration file's folder — on the
    /// nearest existing folder above it while that folder does not exist; when the file is a
    /// symbolic link, one more on the folder of the file it points to — read by the account's watch
    /// thread (an `InotifyLoop`, while observed), which re-reads the configuration on the
    /// `Ubiquity.identity` queue. An account made with a fixed configuration never changes and
    /// never posts. If `inotify` is unavailable (the per-user watch limit reached), nothing is
    /// posted; ``identityToken`` stays right.
    public func beginObservingIdentityChanges() -> UbiquityIdentityObservation {
        extras.identity.retain(account: self)
        let identity = extras.identity
        return UbiquityIdentityObservation { identity.release() }
    }
}

/// Keeps ``UbiquityAccount/identityDidChangeNotification`` coming while it is alive. Cancel it,
/// or let it go, to stop. Any thread.
public final class UbiquityIdentityObservation: Sendable {
    private let stop: Locked<(@Sendable () -> Void)?>

    init(stop: @escaping @Sendable () -> Void) {
        self.stop = Locked(stop)
    }

    /// Stops this observation (the watcher stops with the last one). Calling it again does nothing.
    public func cancel() {
        let action = stop.withLock { value -> (@Sendable () -> Void)? in
            defer { value = nil }
            return value
        }
        action?()
    }

    deinit { cancel() }
}

/// The identity watcher of one account: an ``InotifyLoop`` (thread `Ubiquity.identity`), alive
/// while `observers > 0`, whose turns re-read the configuration on the serial queue
/// `Ubiquity.identity` — the one queue of the account's watches, one after another, so a watch
/// stopping and the next one starting never post at the same time. State behind `Locked`.
final class IdentityWatchState: Sendable {
    private struct State {
        var observers = 0
        /// The running watch's loop; nil when nobody observes (or inotify is unavailable).
        var loop: InotifyLoop?
        var watch: Int32 = -1
        var watchedFolder: String?
        /// When the configuration file is a symbolic link: the watch on the folder of the file it
        /// points to (dotfiles kept elsewhere), and that folder.
        var targetWatch: Int32 = -1
        var watchedTargetFolder: String?
        var last: Result<UbiquityConfiguration, UbiquityError>?
    }
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "Ubiquity.identity")

    func retain(account: UbiquityAccount) {
        guard let environment = account.configurationEnvironment else {
            state.withLock { $0.observers += 1 }
            return
        }
        let file = UbiquityConfiguration.configurationFileURL(environment: environment).path
        state.withLock { state in
            state.observers += 1
            guard state.observers == 1 else { return }
            state.last = Result { () throws(UbiquityError) in try account.configuration().identityPart }
            guard let loop = try? InotifyLoop(name: "Ubiquity.identity") else { return }
            state.loop = loop
            Self.arm(&state, file: file)
            loop.start { [weak account, weak self] _ in Client(watch: self, account: account, file: file) }
        }
    }

    func release() {
        state.withLock { state in
            state.observers -= 1
            guard state.observers == 0, let loop = state.loop else { return }
            loop.stop()  // does not wait; a re-read in progress that has not decided yet posts nothing
            state = State()
        }
    }

    /// What the loop's thread keeps: after each turn that read reports (their content does not
    /// matter: the configuration is re-read), the re-read on the queue.
    private final class Client: InotifyLoopClient {
        weak var watch: IdentityWatchState?
        weak var account: UbiquityAccount?
        let file: String

        init(watch: IdentityWatchState?, account: UbiquityAccount?, file: String) {
            self.watch = watch
            self.account = account
            self.file = file
        }

        func inotifyLoop(_ loop: InotifyLoop, didRead events: [InotifyEvent]) {}

        func inotifyLoopDidFinishTurn(_ loop: InotifyLoop, readEvents: Bool) {
            loop.assertInLoop()
            guard readEvents, let watch, let account else { return }
            watch.queue.sync { watch.configurationMayHaveChanged(account: account, file: file, loop: loop) }
        }
    }

    /// On the queue: moves the watch if the folder appeared or went, then re-reads the
    /// configuration (after the move, so a file written before the new watch existed is seen) and
    /// posts when it differs from the last one — unless the watch of `loop` ended meanwhile.
    private func configurationMayHaveChanged(account: UbiquityAccount, file: String, loop: InotifyLoop) {
        dispatchPrecondition(condition: .onQueue(queue))
        let watching = state.withLock { state -> Bool in
            guard state.loop === loop else { return false }
            Self.arm(&state, file: file)
            return true
        }
        guard watching else { return }
        let now = Result { () throws(UbiquityError) in try account.configuration().identityPart }
        let changed = state.withLock { state -> Bool in
            guard state.loop === loop, state.last != now else { return false }
            state.last = now
            return true
        }
        if changed {
            NotificationCenter.default.post(name: UbiquityAccount.identityDidChangeNotification, object: account)
        }
    }

    /// Watches the folder of the configuration file `file`, or the nearest existing folder above
    /// it, moving the watch when that changes (the folder was created or removed) — and, when `file`
    /// is a symbolic link, the folder of the file it points to as well.
    private static func arm(_ state: inout State, file: String) {
        guard let loop = state.loop else { return }
        let folder = (file as NSString).deletingLastPathComponent
        var resolvedFolder: String?
        if case .success(let resolved) = PathBytes.realPath(file) {
            let parent = (resolved as NSString).deletingLastPathComponent
            if parent != (try? PathBytes.realPath(folder).get()) { resolvedFolder = parent }
        }
        if resolvedFolder != state.watchedTargetFolder {
            if state.targetWatch >= 0 { loop.removeWatch(state.targetWatch) }
            state.targetWatch = resolvedFolder.flatMap { try? loop.addWatch($0, mask: watchMask).get() } ?? -1
            state.watchedTargetFolder = state.targetWatch >= 0 ? resolvedFolder : nil
        }
        var target = folder
        while !target.isEmpty, target != "/", !isDirectory(target) {
            target = (target as NSString).deletingLastPathComponent
        }
        if target.isEmpty { target = "/" }
        guard target != state.watchedFolder else { return }
        if state.watch >= 0 { loop.removeWatch(state.watch) }
        state.watch = (try? loop.addWatch(target, mask: watchMask).get()) ?? -1
        state.watchedFolder = state.watch >= 0 ? target : nil
    }

    private static let watchMask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB
                                          | IN_DELETE_SELF | IN_MOVE_SELF)

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return PathBytes.withCString(path) { stat($0, &info) } == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
