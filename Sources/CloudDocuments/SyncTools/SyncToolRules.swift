import FileCoordination
import Foundation

/// The sync tools' naming rules of this folder (`SyncInternalItems`, `SyncConflictNaming`,
/// `ConflictCopyIdentifier`, `BisyncPromotion`), given to FileCoordination's change monitor and
/// presenter messenger as their `SyncToolPolicy`: which names are temporary or internal items,
/// which are conflict copies (versions) of which item, and rclone bisync's promotion of the
/// winning copy once the folder is quiet.
///
/// **Registration.** FileCoordination knows no sync tool; ``registerWithCoordination()`` makes
/// these rules the process's policy (`CoordinationRuntime.register(syncToolPolicy:)`). It is
/// called — once per process takes effect, later calls cost a check — before anything of
/// CloudDocuments or Ubiquity presents an item or coordinates: when a `CloudDocument` is made,
/// when a `FileVersion` call reaches the version store, and when Ubiquity makes a move's temporary
/// item. Code that registers presenters with `Coordinator` directly, without touching any of
/// those first, calls it itself (until then the monitor treats every name as an ordinary item,
/// see `SyncToolPolicy`).
///
/// Pure functions of the name (``settleConflict(ofItemAt:coordinator:)`` excepted); any thread.
package struct SyncToolRules: SyncToolPolicy {
    package init() {}

    /// Registered once, the first time it is read.
    private static let registration: Void = CoordinationRuntime.register(syncToolPolicy: SyncToolRules())

    /// Makes these rules the policy of every coordination runtime of the process (once; any
    /// thread). See the type's documentation for who calls it.
    package static func registerWithCoordination() { registration }

    package func isInternalItem(named name: String) -> Bool {
        SyncInternalItems.item(named: name) != nil
    }

    package func conflictCopy(named name: String) -> SyncToolConflictCopy? {
        SyncConflictNaming.conflictCopy(named: name, options: .local).map(Self.monitored)
    }

    package func conflictCopy(named name: String, amongOriginals originals: Set<String>) -> SyncToolConflictCopy? {
        SyncConflictNaming.conflictCopy(named: name, amongOriginals: originals, options: .local).map(Self.monitored)
    }

    /// False when `name` cannot be a conflict copy of any of `originals`, whatever the scheme: each
    /// scheme rebuilds the original as a prefix of the copy's name followed by a suffix of it
    /// (`ConflictNameParser.original`), so an original either starts with the copy's first byte or,
    /// when that prefix is empty, ends the copy's name. Most entries of a watched folder (other
    /// files, temporary files of saves, `.raw-…` names) fail this at once and are never parsed.
    package func mayBeConflictCopy(named name: String, ofAnyOf originals: some Sequence<String>) -> Bool {
        guard let first = name.utf8.first else { return false }
        return originals.contains { original in
            original.utf8.first == first || name.utf8.reversed().starts(with: original.utf8.reversed())
        }
    }

    /// rclone bisync's promotion (``BisyncPromotion/promoteIfNeeded(itemAt:listing:coordinator:)``).
    package func settleConflict(ofItemAt itemURL: URL, coordinator: Coordinator) {
        BisyncPromotion.promoteIfNeeded(itemAt: itemURL, coordinator: coordinator)
    }

    /// `copy` as the change monitor knows it.
    static func monitored(_ copy: SyncConflictCopy) -> SyncToolConflictCopy {
        SyncToolConflictCopy(name: copy.name, originalName: copy.originalName,
                             versionIdentifier: ConflictCopyIdentifier.identifier(forCopyNamed: copy.name),
                             leavesOriginalMissing: copy.tool == .rcloneBisync)
    }
}
