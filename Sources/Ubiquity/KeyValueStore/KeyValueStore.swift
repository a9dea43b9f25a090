import Foundation
import SystemSupport
import FileCoordination

/// Small values shared by every process and device of an app: Apple's
/// `NSUbiquitousKeyValueStore`, for Linux, over a folder that a sync tool keeps in sync.
///
/// ```swift
/// let store = KeyValueStore.default
/// try store.set(.string("blue"), forKey: "colour")
/// try store.synchronize()                         // durable, and visible to the other processes
/// let observation = store.addChangeObserver { change in
///     print(change.reason, change.changedKeys)    // another process or device changed them
/// }
/// ```
///
/// ## Storage and merging
/// The store lives in its container's data scope, `CONTAINER/.clouddocuments/key-value-store/`,
/// one file per device (``KeyValueStoreFolder``); each device writes only its own file and reads
/// them all. Writes are merged key by key: the later write wins, by stamp (time, then device —
/// ``KeyValueStoreStamp``), the same on every device; deletions are kept as tombstones so they
/// win over older values too. Two processes of one device share its file through a coordinated
/// read-modify-write (`Coordinator`), so neither loses the other's keys. See Docs/KeyValueStore.md.
///
/// ## Writes and synchronize
/// `set` changes the store in memory at once (every getter sees it) and is written to this
/// device's file by ``synchronize()`` — called by you, or automatically about a second after a
/// change. Once `synchronize()` returns, the change is on disk (`SafeSave`: atomic, `fsync`ed) and
/// other processes and the sync tool see it; a process killed before that loses only its changes
/// not yet synchronized.
///
/// ## Limits
/// Apple's (``KeyValueStoreLimits``): keys of at most 64 bytes, 1,024 keys, 1 MB per value and in
/// all. A write that would go over them throws, changes nothing, and observers get a
/// ``KeyValueStoreChange/Reason/quotaViolationChange`` change naming the key — as Apple's store,
/// where "the write attempt fails and no change is made".
///
/// ## Threading
/// Every member may be used from any thread. Getters and `set` take a lock for microseconds;
/// ``synchronize()`` blocks while it reads and writes files (one at a time per store). Change
/// handlers run on a private serial queue of the store, one change after another, in order.
public final class KeyValueStore: Sendable {
    /// The store of the first configured container of `UbiquityAccount.shared`, for this device
    /// (``DeviceIdentifier``). When no container is available (signed out) it keeps its values
    /// in memory, and it picks up the container once one is configured (at the next
    /// ``synchronize()``).
    public static let `default` = KeyValueStore()

    private enum Source: Sendable {
        case account(UbiquityAccount, containerIdentifier: String?)
        case folder(URL)
    }
    private let source: Source
    /// This device's identifier, or `nil` when none could be had (then nothing is stored on disk).
    public let deviceIdentifier: String?
    /// The queue change handlers run on.
    let notificationQueue = DispatchQueue(label: "Ubiquity.KeyValueStore.changes")

    /// How long a sync tool's conflict copy of a device file stays after its writes were merged
    /// (counted from the copy's arrival on this machine, its change time). Removing it at once
    /// races the sync tool: the other device may still be fetching it, and Syncthing, whose
    /// fetch then fails, stops syncing the whole folder for a minute. Syncthing announces a new
    /// file within its watcher delay (10 s by default), so the default leaves three times that.
    /// Package access for tests, which run Syncthing with a 1 s watcher delay.
    package let conflictCopyRemovalDelay = Locked<Duration>(.seconds(30))

    /// What `synchronize()` and the watcher work with; its lock also makes disk work one at a time.
    /// Lock order: `disk`, then `state`.
    struct DiskState {
        var folder: KeyValueStoreFolder?
        /// Why `folder` is nil.
        var unavailableReason = ""
        /// The last contents read of each device file, by name.
        var snapshots: [String: KeyValueStoreFile.Snapshot] = [:]
        /// The devices whose writes this process has seen (for the initial-sync reason).
        var knownDevices: Set<String> = []
        /// The last error met reading other devices' files (they are skipped), for diagnostics.
        var skippedFiles: [String: KeyValueStoreError] = [:]
        /// How many sync-tool conflict copies this store merged and removed (for tests and
        /// diagnostics).
        var conflictCopiesMerged = 0
        /// Set when the store moved to another account's container and no refresh has reported
        /// that container's keys yet: whichever refresh comes first (the switch's own, a
        /// concurrent `synchronize()` or the folder watcher's) reports them as an account change.
        var accountChangeUnreported = false
        /// Conflict copies already merged into this device's file, by name, with the identity
        /// they had: read once, removed once ``KeyValueStore/conflictCopyRemovalDelay`` has passed.
        var mergedCopies: [String: FileIdentity] = [:]
        /// Whether a refresh is scheduled to remove merged copies once they are old enough.
        var copyRemovalScheduled = false
    }
    let disk = Locked(DiskState())

    /// What the getters and setters work with.
    struct State {
        /// Every key's winning write: the files' merged with `pending`.
        var merged: [String: KeyValueStoreEntry] = [:]
        /// This process's writes not yet in this device's file.
        var pending: [String: KeyValueStoreEntry] = [:]
        var clock = KeyValueStoreClock()
        /// Live keys in `merged`, and the sum of their sizes.
        var keyCount = 0
        var totalSize = 0
        var observers: [Int: @Sendable (KeyValueStoreChange) -> Void] = [:]
        var nextObserver = 0
        var watcher: KeyValueStoreWatcher?
        /// While anyone observes: the account's identity-did-change subscription.
        var accountFollower: AccountFollower?
        var automaticSynchronizationScheduled = false
    }
    let state = Locked(State())

    /// How long after a change the store synchronizes by itself.
    public static let automaticSynchronizationDelay: Duration = .seconds(1)

    /// The store of container `containerIdentifier` (nil: the first configured) of `account`, for
    /// the device `deviceIdentifier` (nil: ``DeviceIdentifier/current(environment:)``). Loads the
    /// keys already stored. Never fails: when no container or device identifier is available the
    /// store keeps its values in memory (``synchronize()`` throws the reason).
    public convenience init(account: UbiquityAccount = .shared, containerIdentifier: String? = nil,
                            deviceIdentifier: String? = nil) {
        self.init(source: .account(account, containerIdentifier: containerIdentifier), deviceIdentifier: deviceIdentifier)
    }

    /// The store kept in `folder` (made when missing), for the device `deviceIdentifier` — for
    /// tools and tests that do not go through a ubiquity account.
    public convenience init(folder: URL, deviceIdentifier: String) {
        self.init(source: .folder(folder), deviceIdentifier: deviceIdentifier)
    }

    private init(source: Source, deviceIdentifier: String?) {
        self.source = source
        var reason = ""
        if let deviceIdentifier {
            if DeviceIdentifier.isValid(deviceIdentifier) {
                self.deviceIdentifier = deviceIdentifier
            } else {
                self.deviceIdentifier = nil
                reason = "the device identifier “\(deviceIdentifier)” is not 1 to 64 letters, digits, - and _"
            }
        } else {
            do { self.deviceIdentifier = try DeviceIdentifier.current() } catch {
                self.deviceIdentifier = nil
                reason = error.errorDescription ?? "\(error)"
            }
        }
        let resolved = reason.isEmpty ? resolveFolder() : .failure(.unavailable(reason: reason))
        disk.withLock { disk in
            switch resolved {
            case .success(let folder): disk.folder = folder
            case .failure(let error): disk.unavailableReason = error.errorDescription ?? "\(error)"
            }
        }
        _ = try? refresh(writingPending: false, notify: false)
    }

    /// Whether the store follows an account (and so may change containers).
    var isAccountBacked: Bool { account != nil }

    /// The account the store follows, or `nil` for a store kept in a fixed folder.
    var account: UbiquityAccount? {
        if case .account(let account, _) = source { return account }
        return nil
    }

    /// The folder this store should use now, made when missing.
    func resolveFolder() -> Result<KeyValueStoreFolder, KeyValueStoreError> {
        guard let deviceIdentifier else { return .failure(.unavailable(reason: "no device identifier")) }
        let url: URL
        switch source {
        case .folder(let folder):
            url = folder
        case .account(let account, let identifier):
            do { url = KeyValueStoreFolder.url(of: try account.container(identifier: identifier)) } catch {
                return .failure(.unavailable(reason: error.errorDescription ?? "\(error)"))
            }
        }
        do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
            return .failure(.unavailable(reason: "the folder \(url.path) cannot be made: \(error.localizedDescription)"))
        }
        return .success(KeyValueStoreFolder(url: url, device: deviceIdentifier))
    }

    /// The folder holding the store's files, or `nil` when it has none (signed out).
    public var folderURL: URL? { disk.withLock { $0.folder?.url } }

    // MARK: Reading

    /// The value of `key`, or `nil` when it has none.
    public func value(forKey key: String) -> KeyValueStoreValue? {
        state.withLock { $0.merged[key]?.value }
    }

    /// The value of `key`, or `nil` when it has none.
    public subscript(key: String) -> KeyValueStoreValue? { value(forKey: key) }

    /// Every key with a value, and its value (Apple's `dictionaryRepresentation`).
    public var dictionaryRepresentation: [String: KeyValueStoreValue] {
        state.withLock { state in state.merged.compactMapValues(\.value) }
    }

    // MARK: Writing

    /// Sets `key` to `value` (`nil` removes it), in memory at once and on disk at the next
    /// synchronization.
    ///
    /// - Throws: ``KeyValueStoreError/keyTooLong(key:bytes:)`` or
    ///   ``KeyValueStoreError/quotaViolation(key:limit:)``; then nothing changed and observers
    ///   get a ``KeyValueStoreChange/Reason/quotaViolationChange`` change naming `key` (on the
    ///   store's notification queue, after this call returns).
    public func set(_ value: KeyValueStoreValue?, forKey key: String) throws(KeyValueStoreError) {
        let keyBytes = key.utf8.count
        if keyBytes > KeyValueStoreLimits.maximumKeyLength {
            notify([KeyValueStoreChange(reason: .quotaViolationChange, changedKeys: [key])])
            throw .keyTooLong(key: key, bytes: keyBytes)
        }
        if let value, case let depth = KeyValueStoreLimits.nestingDepth(of: value), depth > KeyValueStoreLimits.maximumNestingDepth {
            notify([KeyValueStoreChange(reason: .quotaViolationChange, changedKeys: [key])])
            throw .quotaViolation(key: key, limit: .nestingDepth(depth))
        }
        let device = deviceIdentifier ?? "local"
        let outcome: Result<Bool, KeyValueStoreError> = state.withLock { state in
            let old = state.merged[key]
            if value == nil && old?.value == nil { return .success(false) }   // nothing to remove
            let oldSize = old?.value == nil ? nil : old?.size
            let entry = KeyValueStoreEntry(stamp: KeyValueStoreStamp(time: 0, device: device), value: value)
            if let violation = KeyValueStoreLimits.violation(newSize: value == nil ? nil : entry.size, oldSize: oldSize,
                                                            keyCount: state.keyCount, totalSize: state.totalSize) {
                return .failure(.quotaViolation(key: key, limit: violation))
            }
            var stamped = entry
            stamped.stamp.time = state.clock.next()
            state.merged[key] = stamped
            state.pending[key] = stamped
            state.keyCount += (value == nil ? 0 : 1) - (oldSize == nil ? 0 : 1)
            state.totalSize += entry.size - (oldSize ?? 0)
            let schedule = !state.automaticSynchronizationScheduled
            state.automaticSynchronizationScheduled = true
            return .success(schedule)
        }
        switch outcome {
        case .failure(let error):
            notify([KeyValueStoreChange(reason: .quotaViolationChange, changedKeys: [key])])
            throw error
        case .success(let schedule):
            if schedule { scheduleAutomaticSynchronization() }
        }
    }

    /// Removes `key` (a deletion that wins over older values on every device).
    ///
    /// - Throws: ``KeyValueStoreError/keyTooLong(key:bytes:)`` (nothing changed).
    public func removeValue(forKey key: String) throws(KeyValueStoreError) {
        try set(nil, forKey: key)
    }

    private func scheduleAutomaticSynchronization() {
        let delay = Self.automaticSynchronizationDelay
        let nanoseconds = Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.automaticSynchronizationScheduled = false }
            _ = try? self.synchronize()
        }
    }
}
