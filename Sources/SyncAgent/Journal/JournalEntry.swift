import Foundation
import Glibc

/// What the agent saw of a local item when it last synced it: enough to tell, with one `lstat`,
/// whether it changed since. Any difference in one field counts as a change (a rewrite with the
/// same size and the same second changes the change time or the nanoseconds).
public struct LocalFingerprint: Sendable, Hashable, Codable {
    /// The length in bytes (0 for folders).
    public var size: Int64
    /// The modification time in nanoseconds since 1970.
    public var modifiedNanoseconds: Int64
    /// The inode number (a rename over the item gives a new one).
    public var inode: UInt64
    /// The status change time in nanoseconds since 1970.
    public var changedNanoseconds: Int64

    public init(size: Int64, modifiedNanoseconds: Int64, inode: UInt64, changedNanoseconds: Int64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.inode = inode
        self.changedNanoseconds = changedNanoseconds
    }

    /// The fingerprint of an `lstat` result.
    public init(_ info: stat) {
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        inode = UInt64(info.st_ino)
        changedNanoseconds = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
    }
}

/// Where an item stands in the journal.
public enum JournalItemState: String, Sendable, Hashable, Codable {
    /// Local and remote were the same bytes when the entry was written.
    case synced
    /// Synced, and the agent made an unresolved conflict version of it (see ``JournalConflict``).
    case inConflict
}

/// One synced item: the common base the planner compares both sides with.
public struct JournalEntry: Sendable, Hashable, Codable {
    /// The container-relative path (`Notes/a.txt`), `/`-separated.
    public var path: String
    /// Whether it is a folder.
    public var isFolder: Bool
    /// The local item at the last sync (`nil` only for folders, whose fingerprint is not compared).
    public var local: LocalFingerprint?
    /// The server's tag at the last sync (`nil` for folders or a server that gives none).
    public var remoteTag: RemoteTag?
    /// The server's file identity at the last sync, when it has one.
    public var fileID: String?
    /// Whether the agent made an unresolved conflict version of it.
    public var state: JournalItemState
    /// The values of the tags the item had before ``remoteTag`` (newest last, at most
    /// ``previousTagLimit``): a server showing one of them again was rolled back to an older copy
    /// (see ``SyncPlanner``). `nil` in journals written before it existed.
    public var previousTags: [String]?
    /// Whether the item is a package document (a folder synced as one unit): then ``isFolder``
    /// is `false`, ``local`` is the package's ``PackageFingerprint`` and ``remoteTag`` the tag
    /// made of its inner items' tags. `nil` (not a package) in journals written before it existed.
    public var isPackage: Bool?
    /// Whether ``remoteTag`` was read with a separate listing after an upload whose answer had no
    /// tag: a third party's write in between would have given its tag, so the next pass compares
    /// the bytes once (``SyncPlanner``) before trusting it. `nil`: verified.
    public var tagUnverified: Bool?
    /// When this device uploaded the item as a new one (seconds since 1970; `nil` for items that
    /// came from the server, and in older journals): deletions from the server of items added
    /// here lately are guarded apart (a server rolled back to a copy older than them shows just
    /// those deletions, see ``SyncGuards/recentAdditionWindow``).
    public var addedAt: Int64?

    /// How many earlier tags an entry keeps.
    public static let previousTagLimit = 8

    /// `self` recorded over `earlier` (the journal's entry for the same path): the earlier tag
    /// joins the history when it differs from the new one.
    func remembering(_ earlier: JournalEntry?) -> JournalEntry {
        var entry = self
        if entry.addedAt == nil { entry.addedAt = earlier?.addedAt }
        guard let earlier, !earlier.isFolder, !isFolder else { return entry }
        var history = earlier.previousTags ?? []
        if let old = earlier.remoteTag?.value, old != remoteTag?.value { history.append(old) }
        history.removeAll { $0 == remoteTag?.value }
        entry.previousTags = history.isEmpty ? nil : Array(history.suffix(Self.previousTagLimit))
        return entry
    }

    public init(path: String, isFolder: Bool, local: LocalFingerprint?, remoteTag: RemoteTag?,
                fileID: String? = nil, state: JournalItemState = .synced, isPackage: Bool = false) {
        self.isPackage = isPackage ? true : nil
        self.path = path
        self.isFolder = isFolder
        self.local = local
        self.remoteTag = remoteTag
        self.fileID = fileID
        self.state = state
    }
}

/// A conflict version the agent knows of: the local version (by its persistent identifier) and
/// its copy in the server's conflict area, so that resolving it on one device resolves it on all.
public struct JournalConflict: Sendable, Hashable, Codable {
    /// The container-relative path of the item.
    public var itemPath: String
    /// Where the conflict version's bytes are on the server (`.clouddocs-conflicts/<path>/<name>`).
    public var remotePath: String
    /// The local version's persistent identifier (`nil` when it was not made yet).
    public var versionID: String?

    public init(itemPath: String, remotePath: String, versionID: String?) {
        self.itemPath = itemPath
        self.remotePath = remotePath
        self.versionID = versionID
    }
}

/// A server-side rename the agent started and has not finished (see `SyncEngine+Aside.swift`):
/// an item moved aside under a private name at the root of the store (to be verified, then
/// deleted or replaced), and the staging folder of a package upload. Recorded before the first
/// request, removed after the last; a restart finishes or undoes what a `kill -9` interrupted.
public struct JournalPendingMove: Sendable, Hashable, Codable {
    /// The private name at the root of the store (`.clouddocsd-aside-<id>` / `.clouddocsd-staging-<id>`).
    public var privatePath: String
    /// The real path the item came from (aside) or goes to (staging).
    public var realPath: String
    /// `true` for a staging folder (a new package being uploaded), `false` for an item moved aside.
    public var isStaging: Bool
    /// For an item moved aside: whether its contents were verified to be what the plan saw, so
    /// that deleting it loses nothing (then a restart deletes it; otherwise it puts it back).
    public var verified: Bool

    public init(privatePath: String, realPath: String, isStaging: Bool, verified: Bool = false) {
        self.privatePath = privatePath
        self.realPath = realPath
        self.isStaging = isStaging
        self.verified = verified
    }
}

/// Facts about the server as a whole, kept to notice a server that was replaced.
public struct JournalServerIdentity: Sendable, Hashable, Codable {
    /// The root folder's file identity when the server gives one (`oc:fileid`).
    public var rootFileID: String?

    public init(rootFileID: String?) { self.rootFileID = rootFileID }
}

/// One record of the journal's log or snapshot.
enum JournalRecord: Codable, Equatable {
    case put(JournalEntry)
    case remove(path: String)
    case putConflict(JournalConflict)
    case removeConflict(remotePath: String)
    case server(JournalServerIdentity)
    case putPendingMove(JournalPendingMove)
    case removePendingMove(privatePath: String)
}
