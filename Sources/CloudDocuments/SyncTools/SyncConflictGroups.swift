import Foundation

/// The conflict copies of one original name found in a folder listing.
package struct SyncConflictGroup: Hashable, Sendable {
    package let originalName: String
    /// Whether the listing holds the original name. False after an rclone bisync conflict (both
    /// sides renamed), or when a user deleted the original and kept a copy.
    package let originalIsPresent: Bool
    /// The copies, in byte order of their names.
    package let copies: [SyncConflictCopy]
}

extension SyncConflictNaming {
    /// The conflict copies among `names` (the entries of one folder, lossless path strings),
    /// grouped by original name. Rules beyond ``conflictCopy(named:options:)``:
    /// - sync tools' internal items (``SyncInternalItems``) are never copies;
    /// - OneDrive's `NAME-HOST.EXT` (legacy scheme) counts only when `NAME.EXT` is in the listing
    ///   (the client renames the local file and downloads the online one under the real name; an
    ///   ordinary name like `budget-laptop.txt` stays an ordinary file when `budget.txt` is absent);
    /// - OneDrive's `STEM-HOST-safeBackup-NNNN.EXT` with a HOST not in `options` (a copy made on
    ///   another machine) counts when some split at a `-` names an original in the listing (the
    ///   longest such original, that is the shortest host name).
    package static func conflictGroups<Names: Sequence<String>>(
        in names: Names, options: SyncConflictNamingOptions = .init()
    ) -> [String: SyncConflictGroup] {
        let listing = Array(names)
        let present = Set(listing)
        var copiesByOriginal: [String: [SyncConflictCopy]] = [:]
        for name in listing {
            guard let copy = conflictCopy(named: name, amongOriginals: present, options: options) else { continue }
            copiesByOriginal[copy.originalName, default: []].append(copy)
        }
        return copiesByOriginal.reduce(into: [:]) { groups, entry in
            let sorted = entry.value.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            groups[entry.key] = SyncConflictGroup(originalName: entry.key,
                                                  originalIsPresent: present.contains(entry.key), copies: sorted)
        }
    }

    /// The group of `originalName` in the folder whose entries are `names`: what
    /// `conflictGroups(in: names, options: options)[originalName]` returns, without parsing every
    /// name of a large folder. Every scheme writes a copy's name starting with the original's stem
    /// (or the whole original), and no scheme splits the stem before the original's first dot (for
    /// `.hidden`, Syncthing's stem is empty); so only names starting with the original's bytes up to
    /// its first dot can be its copies — and every other original a copy could be matched with
    /// instead (OneDrive's longest-original rule) starts with them too, so the result is the same.
    /// (The cut is at an ASCII byte, so it never splits an escape of a lossless path string.)
    package static func conflictGroup<Names: Sequence<String>>(
        of originalName: String, in names: Names, options: SyncConflictNamingOptions = .init()
    ) -> SyncConflictGroup? {
        let bytes = Array(originalName.utf8)
        let firstDot = bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.endIndex
        let prefix = bytes[..<firstDot]
        let candidates = names.filter { $0.utf8.starts(with: prefix) }
        return conflictGroups(in: candidates, options: options)[originalName]
    }

    /// The conflict copy `name` is in a folder whose entries (or the names that matter, such as the
    /// presented items of the folder) are `originals`, with the rules of
    /// ``conflictGroups(in:options:)`` that need the other names: OneDrive's legacy `NAME-HOST.EXT`
    /// counts only when its original is among `originals`, and a `-safeBackup-` copy of an unknown
    /// host is matched against them. Nil when `name` is not a conflict copy (internal items never are).
    package static func conflictCopy(named name: String, amongOriginals originals: Set<String>,
                                     options: SyncConflictNamingOptions = .init()) -> SyncConflictCopy? {
        // conflictCopy(named:) leaves internal items out.
        guard let copy = conflictCopy(named: name, options: options)
                ?? safeBackupCopy(named: name, originals: originals) else { return nil }
        if copy.scheme == .oneDriveLegacy && !originals.contains(copy.originalName) { return nil }
        return copy
    }

    /// The copy that becomes the current version when `group`'s original is missing, or nil when the
    /// original is present or no copy is rclone bisync's.
    ///
    /// rclone bisync renames both sides of a conflict (`NAME..path1`, `NAME..path2`; ≥ 1.66 with
    /// `--conflict-resolve none`: `NAME.conflict1`, `NAME.conflict2`), so nothing keeps the real name.
    /// The rule: the copy with the newest modification date wins, on equal dates the lower side
    /// number (path1 before path2, `conflict1` before `conflict2`), then the name's byte order. A copy
    /// without a date counts as older than every dated one. Copies of other tools whose original is
    /// missing are never promoted: the user deleted the original, and reviving it would undo that.
    package static func copyBecomingCurrent(in group: SyncConflictGroup,
                                            modificationDate: (SyncConflictCopy) -> Date?) -> SyncConflictCopy? {
        guard !group.originalIsPresent else { return nil }
        let candidates = group.copies.filter { $0.tool == .rcloneBisync }
        return candidates.min { left, right in
            let leftDate = modificationDate(left) ?? .distantPast
            let rightDate = modificationDate(right) ?? .distantPast
            if leftDate != rightDate { return leftDate > rightDate }
            if left.number != right.number { return (left.number ?? .max) < (right.number ?? .max) }
            return left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
        }
    }

    /// A `-safeBackup-` copy whose host is unknown, resolved against the originals in the listing.
    private static func safeBackupCopy(named name: String, originals: Set<String>) -> SyncConflictCopy? {
        guard name.utf8.contains(UInt8(ascii: "-")), SyncInternalItems.item(named: name) == nil else { return nil }
        let parser = ConflictNameParser(name: name, bytes: Array(name.utf8))
        guard let parts = parser.oneDriveSafeBackupParts() else { return nil }
        let stemAndHost = parts.stemAndHost
        for dashIndex in stemAndHost.indices.reversed() where stemAndHost[dashIndex] == UInt8(ascii: "-") {
            let host = stemAndHost[(dashIndex + 1)...]
            guard !host.isEmpty, dashIndex > stemAndHost.startIndex,
                  let original = parser.original(stemAndHost[..<dashIndex], parts.rest),
                  originals.contains(original) else { continue }
            return SyncConflictCopy(name: name, originalName: original, scheme: .oneDriveSafeBackup,
                                    party: parser.text(host), partyRole: .savedTheCopy, number: parts.number)
        }
        return nil
    }
}
