import Foundation

/// What the agent knows about one container right now: the answer to `clouddocs agent status`,
/// and what other processes' providers read to report items' upload and download state.
///
/// Only items that are *not* simply in sync are listed (queued, transferring, in conflict, held).
/// An item inside the container that is not listed is uploaded and current, provided its
/// modification time is not later than ``scannedThrough`` (a change the agent has not seen yet
/// is not uploaded).
public struct ContainerSyncStatus: Codable, Sendable, Equatable {
    /// The container's identifier (`com.example.notes`).
    public var identifier: String
    /// The server, for messages (a URL without credentials).
    public var server: String
    /// What the agent is doing with this container.
    public var state: ContainerSyncState
    /// Local changes the agent has seen up to this moment (items modified later are not uploaded).
    public var scannedThrough: Date?
    /// When the last complete sync with the server ended.
    public var lastSync: Date?
    /// Items waiting for a transfer, by container-relative path.
    public var queued: [QueuedItem]
    /// Transfers in progress.
    public var transfers: [ItemTransfer]
    /// Items with an unresolved conflict version made by the agent.
    public var conflicted: [String]
    /// Deletions held until the user approves them (`clouddocs agent approve-deletions`).
    public var heldDeletions: [HeldDeletion]
    /// The most recent errors, newest last (bounded).
    public var lastErrors: [AgentErrorRecord]
    /// How many items wait in total (``queued`` lists at most the first thousand).
    public var queuedCount: Int = 0
    /// The identifiers of the last ``AgentRequest``s the agent handled, newest last (bounded).
    public var handledRequests: [String] = []
    /// Why the agent refused handled requests (an eviction of an item not uploaded yet, …), by
    /// request identifier; a handled request not listed here was carried out (bounded, like
    /// ``handledRequests``; `nil` from an agent that refuses none).
    ///
    /// A `download` request is handled (listed in ``handledRequests``) as soon as it is queued;
    /// when the download then cannot be done, its reason appears here after the first failed
    /// attempt — `offline: the server cannot be reached (…)` (the text starts with `offline`),
    /// `… deleted on the server …`, a failing step's error — while the item stays queued and
    /// downloads when it can. A reader waits for the file, or for a reason here.
    public var refusedRequests: [String: String]?
    /// The agent's process identifier.
    public var agentProcess: Int32 = 0

    public init(identifier: String, server: String, state: ContainerSyncState, scannedThrough: Date? = nil,
                lastSync: Date? = nil, queued: [QueuedItem] = [], transfers: [ItemTransfer] = [],
                conflicted: [String] = [], heldDeletions: [HeldDeletion] = [], lastErrors: [AgentErrorRecord] = []) {
        self.identifier = identifier
        self.server = server
        self.state = state
        self.scannedThrough = scannedThrough
        self.lastSync = lastSync
        self.queued = queued
        self.transfers = transfers
        self.conflicted = conflicted
        self.heldDeletions = heldDeletions
        self.lastErrors = lastErrors
    }
}

/// The state of one container's sync.
public enum ContainerSyncState: Codable, Sendable, Equatable {
    /// Nothing to do; waiting for the next poll or local change.
    case idle
    /// Transfers or a comparison with the server in progress.
    case syncing
    /// Paused by the user (`clouddocs agent pause`).
    case paused
    /// The server cannot be reached; changes queue and go when it is back. `retryAt` is the next try.
    case offline(reason: String, retryAt: Date?)
    /// The agent refuses to sync this container until the user acts (an unsafe server, a missing
    /// local root, a server that was replaced or rolled back, …).
    case refused(reason: String)
}

/// An item waiting for a transfer.
public struct QueuedItem: Codable, Sendable, Equatable {
    /// The container-relative path.
    public var path: String
    /// What is waiting.
    public var action: SyncAction

    public init(path: String, action: SyncAction) {
        self.path = path
        self.action = action
    }
}

/// What the agent does with an item.
public enum SyncAction: String, Codable, Sendable, Equatable {
    case upload, download, deleteLocal, deleteRemote, moveLocal, moveRemote, conflict
}

/// A transfer in progress.
public struct ItemTransfer: Codable, Sendable, Equatable {
    /// The container-relative path.
    public var path: String
    /// `true` for an upload, `false` for a download.
    public var isUpload: Bool
    /// Bytes sent or received so far.
    public var bytesDone: Int64
    /// The total, when known.
    public var bytesTotal: Int64?

    public init(path: String, isUpload: Bool, bytesDone: Int64, bytesTotal: Int64?) {
        self.path = path
        self.isUpload = isUpload
        self.bytesDone = bytesDone
        self.bytesTotal = bytesTotal
    }

    /// Percent done (0…100), or `nil` when the total is unknown.
    public var percent: Double? {
        guard let total = bytesTotal, total > 0 else { return bytesTotal == 0 ? 100 : nil }
        return min(100, Double(bytesDone) * 100 / Double(total))
    }
}

/// A deletion the guards hold.
public struct HeldDeletion: Codable, Sendable, Equatable {
    /// `true` when the server deleted the items (they would be deleted here), `false` for local
    /// deletions that would be carried to the server.
    public var fromServer: Bool
    /// How many items would be deleted.
    public var count: Int
    /// A few of their paths, for the message.
    public var examples: [String]
    /// Identifies the exact set of deletions held (both kinds), so that an approval applies to
    /// the set the user saw and not to a later one (``AgentRequest/deletionSetIDs``); `nil` in
    /// statuses of older agents.
    public var setID: String?

    public init(fromServer: Bool, count: Int, examples: [String], setID: String? = nil) {
        self.setID = setID
        self.fromServer = fromServer
        self.count = count
        self.examples = examples
    }
}

/// An error the agent met, kept for `status`.
public struct AgentErrorRecord: Codable, Sendable, Equatable {
    public var date: Date
    /// The container-relative path concerned, if any.
    public var path: String?
    public var message: String

    public init(date: Date, path: String?, message: String) {
        self.date = date
        self.path = path
        self.message = message
    }
}
