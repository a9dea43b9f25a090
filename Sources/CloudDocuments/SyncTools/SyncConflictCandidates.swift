import Foundation

// Conflict groups without a folder listing. A program that keeps, for each folder, the few names
// that may be conflict copies (a live metadata query keeps them up to date from `inotify`
// reports) finds an original's group from those names alone, at a cost independent of how many
// other names the folder holds — the same group ``SyncConflictNaming/conflictGroups(in:options:)``
// finds in the whole listing. (Default options: no OneDrive host names, as a folder listing uses.)

extension SyncConflictNaming {
    /// The originals `name` can be a conflict copy of, in some folder: the one its name says for
    /// every scheme, or — for OneDrive's `STEM-HOST-safeBackup-NNNN.EXT` of a host not known
    /// here — each original a split of `STEM-HOST` at a `-` names (which one it belongs to depends
    /// on which of them the folder holds). Empty when `name` is a conflict copy in no folder
    /// (internal items never are). Pure; any thread.
    package static func possibleOriginals(ofCopyNamed name: String) -> [String] {
        if let copy = conflictCopy(named: name) { return [copy.originalName] }
        guard name.utf8.contains(UInt8(ascii: "-")), SyncInternalItems.item(named: name) == nil else { return [] }
        let parser = ConflictNameParser(name: name, bytes: Array(name.utf8))
        guard let parts = parser.oneDriveSafeBackupParts() else { return [] }
        let stemAndHost = parts.stemAndHost
        var originals: [String] = []
        for dashIndex in stemAndHost.indices.reversed() where stemAndHost[dashIndex] == UInt8(ascii: "-") {
            guard dashIndex + 1 < stemAndHost.endIndex, dashIndex > stemAndHost.startIndex,
                  let original = parser.original(stemAndHost[..<dashIndex], parts.rest) else { continue }
            originals.append(original)
        }
        return originals
    }

    /// The conflict group of `originalName` in a folder, from `copies` — every name in the folder
    /// that has `originalName` among its ``possibleOriginals(ofCopyNamed:)`` — and `exists`, which
    /// says whether the folder holds a name (asked about the original, and about the other
    /// originals a `-safeBackup-` copy could belong to). Equal to
    /// `conflictGroups(in: listing)[originalName]` for the folder's whole listing; nil when
    /// `copies` is empty.
    package static func conflictGroup<Copies: Collection<String>>(
        of originalName: String, amongCopies copies: Copies, exists: (String) -> Bool
    ) -> SyncConflictGroup? {
        guard !copies.isEmpty else { return nil }
        // Each name once, by its bytes (two names differing only in Unicode normalization are two).
        var names: [String] = []
        var included: Set<[UInt8]> = []
        func include(_ name: String) { if included.insert(Array(name.utf8)).inserted { names.append(name) } }
        copies.forEach(include)
        if exists(originalName) { include(originalName) }
        var asked: Set<[UInt8]> = [Array(originalName.utf8)]
        for copy in copies where conflictCopy(named: copy) == nil {
            // A `-safeBackup-` copy of an unknown host: the folder's other candidate originals decide.
            for other in possibleOriginals(ofCopyNamed: copy) where asked.insert(Array(other.utf8)).inserted && exists(other) {
                include(other)
            }
        }
        return conflictGroups(in: names)[originalName]
    }
}
