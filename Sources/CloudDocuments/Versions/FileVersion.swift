import FileCoordination
import Foundation
import Glibc
import Synchronization
import SystemSupport

/// One version of a file or folder: its current contents, or an earlier or conflicting version
/// kept in the per-user version store (Apple's `NSFileVersion`, with Apple's names and throwing
/// Swift forms).
///
/// - The **current version** is the item itself (``currentVersionOfItem(at:)``).
/// - **Other versions** are copies kept in the version store (``otherVersionsOfItem(at:)``), added
///   by ``addOfItem(at:withContentsOf:options:)`` or by documents. A **conflict version** is an
///   other version that competes with the current one: it stays until it is resolved
///   (``isResolved``) or removed.
/// - The **conflict copies** that sync tools (Syncthing, Nextcloud, Dropbox, OneDrive, rclone
///   bisync, Unison) leave next to the item are unresolved conflict versions too: their ``url`` is
///   the copy itself, and resolving or removing one deletes the copy (see Docs/Versions.md,
///   "Conflict copies of sync tools").
///
/// The store lives outside every document and synced folder (see Docs/Versions.md, "The version
/// store"); versions stay attached to their item when it is moved or renamed, and survive
/// restarts and crashes.
///
/// ## Threading and coordination
/// Instances are immutable snapshots apart from ``isResolved`` and ``isDiscardable``; every member
/// may be used from any thread. Every change to the versions of an item (add, remove, resolve,
/// replace) runs inside a coordinated write of the item: with the ``Coordinator`` you pass
/// (`coordinator:`); else, when called from inside the accessor of a coordinated access that
/// holds the item (Apple's recipe: "from a block passed to a file coordinator"), inside that very
/// access, whose locks it reuses; else with a new coordinator. Queries read the store without
/// coordinating.
///
/// ## Errors
/// The throwing calls throw ``FileVersionError``; when they do, nothing was changed.
public final class FileVersion: Sendable {
    /// Where the version's contents are: the item itself for the current version, the copy itself
    /// for a sync tool's conflict copy, a file or folder inside the version store otherwise (read
    /// it, do not change it).
    public let url: URL
    /// The item's name when the version was made.
    public let localizedName: String?
    /// The host name of the computer that made the version; `nil` for the current version. For a
    /// sync tool's conflict copy, the user or computer its name says saved it (Dropbox, Nextcloud,
    /// OneDrive), else `nil`.
    public let localizedNameOfSavingComputer: String?
    /// When the version's contents were last modified (for a stored version: when they were
    /// added, the modification date of the contents then).
    public let modificationDate: Date?
    /// The version's stable identity; see ``version(itemAt:forPersistentIdentifier:)``.
    public let persistentIdentifier: PersistentIdentifier
    /// Whether this is a conflict version (stays `true` after it is resolved).
    public let isConflict: Bool

    /// The item this version belongs to, where it was when this object was made.
    let itemURL: URL
    /// The item's identity in the store; `nil` for the current version and conflict copies.
    let itemID: String?
    /// The name of the sync tool's conflict copy this version is (in the item's folder, a lossless
    /// path string); `nil` for the current version and stored versions.
    let conflictCopyName: String?
    let store: VersionStore

    struct State {
        var isResolved: Bool
        var isDiscardable: Bool
    }
    /// The mutable flags; protected by the `Locked` mutex.
    let state: Locked<State>

    /// The current version of an item.
    init(currentOf itemURL: URL, store: VersionStore, modificationDate: Date?) {
        url = itemURL
        localizedName = itemURL.lastPathComponent
        localizedNameOfSavingComputer = nil
        self.modificationDate = modificationDate
        persistentIdentifier = .current
        isConflict = false
        self.itemURL = itemURL
        itemID = nil
        conflictCopyName = nil
        self.store = store
        state = Locked(State(isResolved: true, isDiscardable: false))
    }

    /// A stored version.
    init(record: VersionRecord, itemID: String, itemURL: URL, store: VersionStore) {
        url = PathBytes.fileURL(store.contentsPath(itemID, record))
        localizedName = PathBytes.display(record.itemName)
        localizedNameOfSavingComputer = record.savingComputer
        modificationDate = record.modificationDate
        persistentIdentifier = PersistentIdentifier(rawValue: record.id)
        isConflict = record.isConflict
        self.itemURL = itemURL
        self.itemID = itemID
        conflictCopyName = nil
        self.store = store
        state = Locked(State(isResolved: record.isResolved, isDiscardable: record.isDiscardable))
    }

    /// A sync tool's conflict copy of the item, at `copyPath` (beside the item), as an unresolved
    /// conflict version.
    init(conflictCopy copy: SyncConflictCopy, at copyPath: String, identity: FileIdentity, itemURL: URL, store: VersionStore) {
        url = PathBytes.fileURL(copyPath)
        localizedName = PathBytes.display(copy.originalName)
        localizedNameOfSavingComputer = copy.savingComputer.map(PathBytes.display)
        modificationDate = identity.modificationDate
        persistentIdentifier = PersistentIdentifier(rawValue: ConflictCopyIdentifier.identifier(forCopyNamed: copy.name))
        isConflict = true
        self.itemURL = itemURL
        itemID = nil
        conflictCopyName = copy.name
        self.store = store
        state = Locked(State(isResolved: false, isDiscardable: false))
    }

    /// Whether this is the item's current version.
    var isCurrent: Bool { itemID == nil && conflictCopyName == nil }

    /// Whether the conflict is resolved: `false` only for an unresolved conflict version.
    ///
    /// Setting it to `true` resolves the conflict: the version is no longer among
    /// ``unresolvedConflictVersionsOfItem(at:)``, stays among ``otherVersionsOfItem(at:)`` until it
    /// is removed, and from then on the store's bounding policy may drop it like any other
    /// version. Setting `false` does nothing (a conflict cannot be un-resolved). For a sync tool's
    /// conflict copy, resolving deletes the copy (through a coordinated write, so the sync tool
    /// carries the resolution to every device).
    ///
    /// Set it anywhere, also inside a coordinated access of the item (Apple's recipe resolves
    /// conflicts from the block of a file coordinator): the change then joins that access (see
    /// ``resolve(coordinator:)``). A setter cannot throw: when resolving fails, the value stays
    /// `false` and the failure is written as one line on standard error (`CloudDocuments: …`, as
    /// Apple's frameworks log theirs). Call ``resolve(coordinator:)`` to get the error.
    public var isResolved: Bool {
        get { state.withLock { $0.isResolved } }
        set {
            guard newValue else { return }
            do throws(FileVersionError) { try resolve() } catch { Self.reportSetterFailure("resolve", version: self, error) }
        }
    }

    /// Whether the store may drop this version before others when it needs room (added versions
    /// start as not discardable). When recording the change fails, the value stays as it was and
    /// the failure is written as one line on standard error, as for ``isResolved``: call
    /// ``setDiscardable(_:coordinator:)`` to get the error.
    public var isDiscardable: Bool {
        get { state.withLock { $0.isDiscardable } }
        set {
            do throws(FileVersionError) { try setDiscardable(newValue) } catch {
                Self.reportSetterFailure("mark as \(newValue ? "discardable" : "not discardable")", version: self, error)
            }
        }
    }

    /// How many failures the setters of ``isResolved`` and ``isDiscardable`` reported since the
    /// process started (tests observe it).
    static var setterFailureCount: Int { setterFailures.load(ordering: .acquiring) }
    private static let setterFailures = Atomic<Int>(0)

    /// Reports a failure a setter cannot throw: one line on standard error, never silence.
    static func reportSetterFailure(_ what: String, version: FileVersion, _ error: FileVersionError) {
        setterFailures.add(1, ordering: .acquiringAndReleasing)
        let line = Array("CloudDocuments: could not \(what) the version \(version.persistentIdentifier.rawValue) of “\(version.itemURL.path)”: \(error)\n".utf8)
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    /// Whether the version's contents are on this computer: `true` unless the version was removed
    /// (or moved out by ``replaceItem(at:options:)`` with `.byMoving`). For a conflict copy: while
    /// the copy exists.
    public var hasLocalContents: Bool {
        (try? POSIX.linkStatus(PathBytes.path(of: url))) != nil
    }

    /// The host name of this computer, recorded as the saving computer of versions added here.
    static var hostName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}
