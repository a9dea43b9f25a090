import Foundation
import Glibc
import SystemSupport

// The naming rules of the conflict copies that sync tools leave next to a file. Pure functions of
// names (no file system access): the versions and presenter code decides what to do with them.
// The rules per tool, with examples, are in Docs/Versions.md ("Conflict copies of sync tools").
//
// Layering: these rules live in CloudDocuments, which uses them for `FileVersion`; Ubiquity uses
// them for queries, providers and the key-value store. FileCoordination's change monitor needs them
// too — it must tell a conflict copy of a presented item (a version message) and a sync tool's
// temporary file (nothing at all) from a new subitem — and asks them through its `SyncToolPolicy`,
// which `SyncToolRules` answers. They are package API: pure functions of names.

/// A sync tool that leaves conflict copies in the synced folder.
package enum SyncTool: String, Sendable, Hashable, CaseIterable {
    case syncthing, nextcloud, dropbox, oneDrive, rcloneBisync, unison
}

/// One naming scheme of conflict copies (a tool may have several).
package enum SyncConflictScheme: String, Sendable, Hashable, CaseIterable {
    /// `STEM.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.EXT` (Syncthing).
    case syncthing
    /// `NAME (conflicted copy [USER ]YYYY-MM-DD HHMMSS).EXT` (Nextcloud and ownCloud clients ≥ 2.5).
    case nextcloud
    /// `NAME_conflict-YYYYMMDD-HHMMSS.EXT` or `NAME_conflict_USER-YYYYMMDD-HHMMSS.EXT` (older clients).
    case nextcloudLegacy
    /// `NAME (USER's conflicted copy YYYY-MM-DD).EXT` (Dropbox, English).
    case dropbox
    /// `STEM-HOST-safeBackup-NNNN.EXT` (abraunegg OneDrive client ≥ 2.5.3).
    case oneDriveSafeBackup
    /// `STEM-HOST.EXT`, `STEM-HOST-N.EXT` (abraunegg OneDrive client 2.4 to 2.5.2).
    case oneDriveLegacy
    /// `NAME..path1`, `NAME..path2` (rclone bisync before 1.66; Debian 12 ships 1.60).
    case rcloneBisyncPath
    /// `NAME.conflictN` (rclone bisync ≥ 1.66, default `--conflict-suffix`).
    case rcloneBisyncNumbered
    /// `NAME (conflict[ #N]_on_YYYY-MM-DD[_was_deleted])` (Unison with `-copyonconflict`).
    case unison

    /// The tool that uses this scheme.
    package var tool: SyncTool {
        switch self {
        case .syncthing: .syncthing
        case .nextcloud, .nextcloudLegacy: .nextcloud
        case .dropbox: .dropbox
        case .oneDriveSafeBackup, .oneDriveLegacy: .oneDrive
        case .rcloneBisyncPath, .rcloneBisyncNumbered: .rcloneBisync
        case .unison: .unison
        }
    }
}

/// What the device, user or host written in a conflict copy's name did.
package enum SyncConflictPartyRole: String, Sendable, Hashable {
    /// Saved the contents that are in the copy (Dropbox user or computer, Nextcloud user, OneDrive
    /// host): the right value for `localizedNameOfSavingComputer` of the copy's version.
    case savedTheCopy
    /// Made the version that now has the original name (Syncthing's short device ID: the winner,
    /// not the device whose contents are in the copy; verified with real Syncthing 1.19).
    case madeTheCurrentVersion
}

/// The date (and, where the name carries it, the time) written in a conflict copy's name, as
/// written: the local time of the machine that made the copy, without a time zone.
package struct SyncConflictTimestamp: Hashable, Sendable, CustomStringConvertible {
    package let year: Int
    package let month: Int
    package let day: Int
    /// Nil when the name carries only a date (Dropbox, Unison).
    package let hour: Int?
    package let minute: Int?
    package let second: Int?

    package init(year: Int, month: Int, day: Int, hour: Int? = nil, minute: Int? = nil, second: Int? = nil) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second
    }

    /// The moment in `timeZone` (midnight when the name carries no time); nil if the calendar
    /// rejects the fields.
    package func date(in timeZone: TimeZone = .current) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.date(from: DateComponents(year: year, month: month, day: day,
                                                  hour: hour ?? 0, minute: minute ?? 0, second: second ?? 0))
    }

    package var description: String {
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        guard let hour, let minute, let second else { return date }
        return date + String(format: " %02d:%02d:%02d", hour, minute, second)
    }
}

/// A name recognised as a sync tool's conflict copy of another name in the same folder.
package struct SyncConflictCopy: Hashable, Sendable {
    /// The copy's own name (a lossless path string, see `PathBytes`).
    package let name: String
    /// The name the copy is a conflict copy of (may be missing from the folder: rclone bisync
    /// renames both sides, and users delete originals).
    package let originalName: String
    package let scheme: SyncConflictScheme
    /// The device ID, user or host name written in the name, if any; see ``partyRole``.
    package let party: String?
    package let partyRole: SyncConflictPartyRole?
    package let timestamp: SyncConflictTimestamp?
    /// rclone: 1 for path1 / `conflict1`, 2 for path2, N for `conflictN`; Unison: the `#N`;
    /// OneDrive: the backup counter (legacy scheme: 1 when the name has none). Nil otherwise.
    package let number: Int?
    /// Unison's `_was_deleted`: the other replica deleted the file, this copy keeps the contents.
    package let originalWasDeleted: Bool

    package init(name: String, originalName: String, scheme: SyncConflictScheme, party: String? = nil,
                 partyRole: SyncConflictPartyRole? = nil, timestamp: SyncConflictTimestamp? = nil,
                 number: Int? = nil, originalWasDeleted: Bool = false) {
        self.name = name; self.originalName = originalName; self.scheme = scheme
        self.party = party; self.partyRole = party == nil ? nil : partyRole
        self.timestamp = timestamp; self.number = number; self.originalWasDeleted = originalWasDeleted
    }

    package var tool: SyncTool { scheme.tool }

    /// The value for `localizedNameOfSavingComputer`: the party when it saved the copy's contents,
    /// else nil (Syncthing's device ID names the winner, see ``SyncConflictPartyRole``).
    package var savingComputer: String? { partyRole == .savedTheCopy ? party : nil }
}

/// What the recogniser needs to know beyond the name.
package struct SyncConflictNamingOptions: Sendable, Hashable {
    /// Host names the abraunegg OneDrive client may have put into names (its `NAME-HOST.EXT` copies
    /// are indistinguishable from ordinary names otherwise). Empty: OneDrive copies are recognised
    /// only through a folder listing (see ``SyncConflictNaming/conflictGroups(in:options:)``).
    package var oneDriveHostNames: Set<String>

    package init(oneDriveHostNames: Set<String> = []) {
        self.oneDriveHostNames = oneDriveHostNames
    }

    /// Options naming this machine's host name (`gethostname`), the name the OneDrive client
    /// running here writes.
    package static var thisMachine: SyncConflictNamingOptions {
        SyncConflictNamingOptions(oneDriveHostNames: SyncConflictNaming.localHostName().map { [$0] } ?? [])
    }
}

/// Recognises conflict copies and sync tools' internal files by name. Thread-safe (pure functions).
package enum SyncConflictNaming {
    /// The conflict copy `name` is, or nil when it is not one. An internal item
    /// (``SyncInternalItems/item(named:)``, e.g. Syncthing's temporary file of a conflict copy) is
    /// never a conflict copy. `name` is one file name (no `/`), a lossless path string.
    package static func conflictCopy(named name: String,
                                     options: SyncConflictNamingOptions = .init()) -> SyncConflictCopy? {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, !bytes.contains(UInt8(ascii: "/")),
              SyncInternalItems.item(named: name) == nil else { return nil }
        let parser = ConflictNameParser(name: name, bytes: bytes)
        // Cheap tests first: most names hold no marker at all (every scheme but rclone's `..pathN`
        // and OneDrive's has "conflict" in its tag; OneDrive's need a `-` and a host name).
        if parser.contains(conflictMarker) {
            if let copy = parser.syncthing() ?? parser.nextcloud() ?? parser.nextcloudLegacy()
                ?? parser.dropbox() ?? parser.unison() ?? parser.rcloneNumbered() {
                return copy
            }
        }
        if let copy = parser.rclonePath() { return copy }
        guard !options.oneDriveHostNames.isEmpty, bytes.contains(UInt8(ascii: "-")) else { return nil }
        return parser.oneDriveSafeBackup(hosts: options.oneDriveHostNames)
            ?? parser.oneDriveLegacy(hosts: options.oneDriveHostNames)
    }

    private static let conflictMarker = Array("conflict".utf8)

    /// ``conflictCopy(named:options:)`` for a name given as its raw bytes (any bytes but `/` and NUL).
    package static func conflictCopy<Bytes: Collection<UInt8>>(
        namedBytes bytes: Bytes, options: SyncConflictNamingOptions = .init()
    ) -> SyncConflictCopy? {
        guard !bytes.contains(0) else { return nil }
        return conflictCopy(named: PathBytes.string(fromBytes: bytes), options: options)
    }

    /// True for names presenters must never be told about as new subitems: conflict copies
    /// (reported as versions instead) and the sync tools' temporary and internal files.
    package static func isHiddenFromPresenters(_ name: String,
                                               options: SyncConflictNamingOptions = .init()) -> Bool {
        SyncInternalItems.item(named: name) != nil || conflictCopy(named: name, options: options) != nil
    }

    /// This machine's host name, or nil if `gethostname` fails.
    package static func localHostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let bytes = buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? nil : PathBytes.string(fromBytes: bytes)
    }
}
