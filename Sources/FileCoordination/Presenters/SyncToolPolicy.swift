import Foundation

// The hook through which a layer above tells the change monitor and the presenter messenger about
// sync tools (Syncthing, Nextcloud, Dropbox, rclone, …) and the other programs that leave
// temporary files in a folder. FileCoordination itself knows no sync tool's names: CloudDocuments
// registers its rules (`CloudDocuments/SyncTools/`, `SyncToolRules`) with
// `CoordinationRuntime.register(syncToolPolicy:)` before it presents or coordinates anything (when
// a `CloudDocument` or a version store is made; Ubiquity's moves and FoundationCompatibility's
// `NSFileCoordinator` register too), so a process using those layers has them.

/// What the change monitor and the presenter messenger ask about the names of a watched folder.
///
/// The questions about names are asked from the change monitor's thread, a coordinating thread or
/// a waiting thread, sometimes with the monitor's lock held: their answers must be quick, pure
/// functions of the names that never coordinate, message a presenter or take a lock of the monitor.
/// ``settleConflict(ofItemAt:coordinator:)`` alone acts: it runs on the monitor's settlement
/// queue with nothing held, and coordinates.
///
/// Without a registered policy (``NoSyncToolPolicy``, a process using FileCoordination alone) the
/// monitor and the messenger treat every name as an ordinary item, as in a folder no sync tool
/// touches: a temporary file is a new subitem for folder presenters while it exists, a move of a
/// presented item to any name is followed, a deletion is a deletion, and nothing is renamed for a
/// sync tool. Safe: nothing is written or renamed that would not be otherwise, and presenters hear
/// of a sync tool's files as of any other program's.
package protocol SyncToolPolicy: Sendable {
    /// Whether `name` (one file name, a lossless path string) is a temporary or internal item of a
    /// sync tool, an editor, an office suite or an atomic write: never reported to folder
    /// presenters as a subitem, and a presented item moved to such a name is followed only when it
    /// reaches its final name (Syncthing renames through `.syncthing.NAME.tmp`).
    func isInternalItem(named name: String) -> Bool

    /// The conflict copy `name` is by its name alone (the rules that need the folder's other
    /// names do not apply), or nil when it is not one. A presented item moved to such a name has
    /// become a version of itself (its presenters get a deletion), and folder presenters are never
    /// told about it.
    func conflictCopy(named name: String) -> SyncToolConflictCopy?

    /// The conflict copy `name` is in a folder whose entries that matter — the presented items of
    /// the folder — are `originals`, or nil. The copy's original need not be among `originals`.
    func conflictCopy(named name: String, amongOriginals originals: Set<String>) -> SyncToolConflictCopy?

    /// A cheap test made before ``conflictCopy(named:amongOriginals:)`` on every entry the kernel
    /// reports in a watched folder: false when `name` cannot be a conflict copy of any of
    /// `originals`, whatever the tool. May answer true for names that are not copies.
    func mayBeConflictCopy(named name: String, ofAnyOf originals: some Sequence<String>) -> Bool

    /// A conflict copy whose tool leaves the original missing (``SyncToolConflictCopy/leavesOriginalMissing``,
    /// rclone bisync) appeared beside the item at `itemURL`, and the folder has been quiet since:
    /// when the item is still missing, make the winning copy the item, with a coordinated write of
    /// `coordinator` (so presenters hear of it as of any coordinated change). Does nothing when
    /// the item is back or the write fails. Runs on the change monitor's promotion queue, outside
    /// any coordinated access and with no lock of the monitor held; it may take a while.
    func settleConflict(ofItemAt itemURL: URL, coordinator: Coordinator)
}

extension SyncToolPolicy {
    /// True for names presenters are never told about as new subitems: internal items and conflict
    /// copies (reported as versions instead).
    package func isHiddenFromPresenters(_ name: String) -> Bool {
        isInternalItem(named: name) || conflictCopy(named: name) != nil
    }
}

/// A sync tool's conflict copy, as the change monitor needs to know it.
package struct SyncToolConflictCopy: Sendable, Hashable {
    /// The copy's name (one file name, a lossless path string).
    package let name: String
    /// The name of the item it is a conflict copy of, in the same folder.
    package let originalName: String
    /// The persistent identifier of the conflict version the copy is (the
    /// ``FileVersionReference/persistentIdentifier`` of the version messages; CloudDocuments'
    /// `FileVersion` lists the copy with the same one).
    package let versionIdentifier: String
    /// True when the tool renames both sides of a conflict and leaves nothing under the original
    /// name (rclone bisync's `NAME..path1` / `NAME..path2`): the original missing beside such a
    /// copy is not a deletion, and once the folder is quiet the monitor asks the policy to
    /// ``SyncToolPolicy/settleConflict(ofItemAt:coordinator:)``.
    package let leavesOriginalMissing: Bool

    package init(name: String, originalName: String, versionIdentifier: String, leavesOriginalMissing: Bool) {
        self.name = name
        self.originalName = originalName
        self.versionIdentifier = versionIdentifier
        self.leavesOriginalMissing = leavesOriginalMissing
    }
}

/// The policy of a process that registered none: no name is a sync tool's (see ``SyncToolPolicy``
/// for what the monitor then does).
package struct NoSyncToolPolicy: SyncToolPolicy {
    package init() {}
    package func isInternalItem(named name: String) -> Bool { false }
    package func conflictCopy(named name: String) -> SyncToolConflictCopy? { nil }
    package func conflictCopy(named name: String, amongOriginals originals: Set<String>) -> SyncToolConflictCopy? { nil }
    package func mayBeConflictCopy(named name: String, ofAnyOf originals: some Sequence<String>) -> Bool { false }
    package func settleConflict(ofItemAt itemURL: URL, coordinator: Coordinator) {}
}
