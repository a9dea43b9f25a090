import Foundation

/// Keys of the store that changed other than by this process's own writes — Apple's
/// `didChangeExternallyNotification` as a value.
public struct KeyValueStoreChange: Sendable, Hashable {
    /// Why the keys changed, with Apple's raw values (`NSUbiquitousKeyValueStoreServerChange` …).
    public enum Reason: Int, Sendable, Hashable, CustomStringConvertible {
        /// Another device wrote the keys (its file arrived through the sync tool) — or another
        /// process of this device did (there is no server here: every write not made by this
        /// process comes from "outside").
        case serverChange = 0
        /// The first keys this process received from a device whose file it had not read before.
        case initialSyncChange = 1
        /// A write of this process was refused: it would have gone over a limit
        /// (``KeyValueStoreLimits``). `changedKeys` holds the refused key; nothing changed.
        case quotaViolationChange = 2
        /// The ubiquity account changed (another root or container, signing in or out): the store
        /// now shows another container's keys.
        case accountChange = 3

        public var description: String {
            switch self {
            case .serverChange: "server-change"
            case .initialSyncChange: "initial-sync"
            case .quotaViolationChange: "quota-violation"
            case .accountChange: "account-change"
            }
        }
    }

    /// Why the keys changed.
    public var reason: Reason
    /// The keys whose values changed (or, for a quota violation, the refused key), sorted.
    public var changedKeys: [String]

    /// A change of `changedKeys` for `reason`.
    public init(reason: Reason, changedKeys: [String]) {
        self.reason = reason
        self.changedKeys = changedKeys
    }
}

/// A registration of a change handler; the handler is called until ``cancel()`` is called or this
/// object is released.
public final class KeyValueStoreObservation: Sendable {
    private let cancellation: @Sendable () -> Void

    init(cancellation: @escaping @Sendable () -> Void) {
        self.cancellation = cancellation
    }

    /// Stops the handler being called. A call already under way finishes. Idempotent.
    public func cancel() { cancellation() }

    deinit { cancellation() }
}
