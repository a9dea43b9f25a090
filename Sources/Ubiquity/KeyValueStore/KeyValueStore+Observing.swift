import Foundation

extension KeyValueStore {
    /// Calls `handler` with every change of the store not made by this process's own `set` —
    /// another process of this device, another device (through the sync tool), a refused write
    /// (quota violation) or an account change — until the returned observation is cancelled or
    /// released.
    ///
    /// The first observer starts watching the store's folder (`inotify`), so changes written by
    /// other processes and brought by the sync tool are noticed within milliseconds of reaching
    /// the disk, without calling ``synchronize()``.
    ///
    /// Threading: `handler` runs on the store's private serial queue, one change at a time, in the
    /// order they were noticed. Hop to your own queue or actor for UI work.
    public func addChangeObserver(_ handler: @escaping @Sendable (KeyValueStoreChange) -> Void) -> KeyValueStoreObservation {
        let (identifier, startWatcher) = state.withLock { state in
            let identifier = state.nextObserver
            state.nextObserver += 1
            state.observers[identifier] = handler
            return (identifier, state.watcher == nil)
        }
        if startWatcher {
            followAccountIfNeeded()
            restartWatchingIfNeeded()
        }
        return KeyValueStoreObservation { [weak self] in
            self?.state.withLock { _ = $0.observers.removeValue(forKey: identifier) }
        }
    }

    /// The store's changes as an asynchronous sequence (an observer that lasts until the
    /// iteration ends). Changes are buffered without limit while nobody awaits.
    public var changes: AsyncStream<KeyValueStoreChange> {
        AsyncStream { continuation in
            let observation = addChangeObserver { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }

    /// Hands `changes` to the observers on the notification queue (looked up there, so an
    /// observer cancelled meanwhile is not called). Package access: `NSUbiquitousKeyValueStore`
    /// reports the values it refuses (not property lists) this way, like the store's own refusals.
    package func notify(_ changes: [KeyValueStoreChange]) {
        let changes = changes.filter { !$0.changedKeys.isEmpty }
        guard !changes.isEmpty else { return }
        notificationQueue.async { [weak self] in
            guard let self else { return }
            dispatchPrecondition(condition: .onQueue(self.notificationQueue))
            for change in changes {
                let observers = self.state.withLock { $0.observers.sorted { $0.key < $1.key }.map(\.value) }
                for observer in observers { observer(change) }
            }
        }
    }

    /// While anyone observes an account-backed store, an account change (the configuration names
    /// another root, or none) is acted on as soon as the account posts
    /// ``UbiquityAccount/identityDidChangeNotification``, not only at the next ``synchronize()``.
    private func followAccountIfNeeded() {
        guard let account, state.withLock({ $0.accountFollower == nil }) else { return }
        let follower = AccountFollower(account: account) { [weak self] in self?.accountDidChange() }
        let extra = state.withLock { state -> AccountFollower? in
            guard state.accountFollower == nil else { return follower }
            state.accountFollower = follower
            return nil
        }
        extra?.cancel()
    }

    /// Starts (or moves) the folder watcher when there are observers and a folder.
    func restartWatchingIfNeeded() {
        let folder = disk.withLock { $0.folder }
        let wanted = state.withLock { !$0.observers.isEmpty }
        guard wanted, let folder else { return stopWatching() }
        let watcher = KeyValueStoreWatcher(folderPath: folder.path) { [weak self] in
            _ = try? self?.refresh(writingPending: false, notify: true)
        }
        let old = state.withLock { state -> KeyValueStoreWatcher? in
            defer { state.watcher = watcher }
            return state.watcher
        }
        old?.stop()
        // Changes made between the last read and the watch starting are picked up now.
        _ = try? refresh(writingPending: false, notify: true)
    }

    func stopWatching() {
        state.withLock { state -> KeyValueStoreWatcher? in
            defer { state.watcher = nil }
            return state.watcher
        }?.stop()
    }
}

/// An identity-did-change subscription: the account's configuration watch plus a notification
/// observer that calls `action` (on the account's identity queue). Ends when cancelled or released.
final class AccountFollower: Sendable {
    private let observation: UbiquityIdentityObservation
    // nonisolated(unsafe): the token is written once in init, then only handed to removeObserver.
    private nonisolated(unsafe) let token: any NSObjectProtocol

    init(account: UbiquityAccount, action: @escaping @Sendable () -> Void) {
        observation = account.beginObservingIdentityChanges()
        token = NotificationCenter.default.addObserver(
            forName: UbiquityAccount.identityDidChangeNotification, object: account, queue: nil) { _ in action() }
    }

    func cancel() {
        observation.cancel()
        NotificationCenter.default.removeObserver(token)
    }

    deinit { cancel() }
}
