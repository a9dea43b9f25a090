// The temporary and internal files that sync tools (and editors, office suites and Foundation's
// atomic writes) leave in a synced folder. Never new subitems for presenters, never documents.

/// Who makes an internal item.
package enum SyncInternalItemOwner: String, Sendable, Hashable, CaseIterable {
    case syncthing, nextcloud, dropbox, oneDrive, rclone, resilio, unison
    /// rclone's and the OneDrive client's `*.partial` (same pattern, either tool).
    case rcloneOrOneDrive
    /// LibreOffice (`.~lock.NAME#`) and Microsoft Office (`~$NAME`) lock files.
    case office
    /// Vim swap files, Emacs backups and lock links.
    case editor
    /// Foundation's atomic writes (`.dat.nosync…`, created then renamed over the target).
    case foundation
}

/// What an internal item is for.
package enum SyncInternalItemKind: String, Sendable, Hashable {
    /// A file being transferred or written, renamed over (or to) a real name when complete.
    case transferTemporary
    /// The tool's own markers, databases and logs.
    case toolMetadata
    /// A lock or swap file held while a document is open in another program.
    case lockOrSwap
    /// An editor's backup copy.
    case editorBackup
}

/// A name recognised as an internal item.
package struct SyncInternalItem: Hashable, Sendable {
    package let owner: SyncInternalItemOwner
    package let kind: SyncInternalItemKind
}

/// Recognises internal items by name. Thread-safe (pure functions).
package enum SyncInternalItems {
    /// The internal item `name` (one file name, a lossless path string) is, or nil for other names.
    package static func item(named name: String) -> SyncInternalItem? {
        func item(_ owner: SyncInternalItemOwner, _ kind: SyncInternalItemKind) -> SyncInternalItem {
            SyncInternalItem(owner: owner, kind: kind)
        }
        // Exact names.
        switch name {
        case ".stfolder", ".stignore", ".stversions": return item(.syncthing, .toolMetadata)
        case ".csync_journal.db", ".owncloudsync.log": return item(.nextcloud, .toolMetadata)
        case ".dropbox", ".dropbox.cache": return item(.dropbox, .toolMetadata)
        case ".sync": return item(.resilio, .toolMetadata)
        default: break
        }
        // Syncthing: `.syncthing.NAME.tmp` (Unix) and `~syncthing~NAME.tmp` (Windows builds); NAME is
        // a SHA-256 in hex for long names.
        for prefix in [".syncthing.", "~syncthing~"] where hasAffixes(name, prefix, ".tmp") {
            return item(.syncthing, .transferTemporary)
        }
        // Unison: `.unison.NAME.HASH.unison.tmp`; before 2.40 `.#NAME.HASH.unison.tmp`.
        if name.hasPrefix("."), name.hasSuffix(".unison.tmp"), name.utf8.count > ".unison.tmp".utf8.count {
            return item(.unison, .transferTemporary)
        }
        if isNextcloudDownload(name) { return item(.nextcloud, .transferTemporary) }
        if isNextcloudDatabase(name) { return item(.nextcloud, .toolMetadata) }
        if hasAffixes(name, "", ".part") || hasAffixes(name, "", ".filepart") {
            return item(.nextcloud, .transferTemporary)
        }
        if hasAffixes(name, "", ".partial") { return item(.rcloneOrOneDrive, .transferTemporary) }
        if hasAffixes(name, "", ".!sync") { return item(.resilio, .transferTemporary) }
        if name.hasPrefix(".dat.nosync") { return item(.foundation, .transferTemporary) }
        if hasAffixes(name, ".~lock.", "#") || hasAffixes(name, "~$", "") { return item(.office, .lockOrSwap) }
        if hasAffixes(name, ".", ".swp") || hasAffixes(name, ".#", "") { return item(.editor, .lockOrSwap) }
        if hasAffixes(name, "", "~") { return item(.editor, .editorBackup) }
        return nil
    }

    /// True when `name` starts with `prefix`, ends with `suffix` and has at least one byte between.
    private static func hasAffixes(_ name: String, _ prefix: String, _ suffix: String) -> Bool {
        let bytes = name.utf8
        return bytes.count > prefix.utf8.count + suffix.utf8.count
            && bytes.starts(with: prefix.utf8) && bytes.reversed().starts(with: suffix.utf8.reversed())
    }

    /// Nextcloud's download temporary `.NAME.~HEX`: 1 to 8 lower-case hex digits (an unpadded
    /// random 32-bit number).
    private static func isNextcloudDownload(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.first == UInt8(ascii: "."), let tilde = bytes.lastIndex(of: UInt8(ascii: "~")),
              tilde >= 3, bytes[tilde - 1] == UInt8(ascii: ".") else { return false }
        let digits = bytes[(tilde + 1)...]
        return (1...8).contains(digits.count) && digits.allSatisfy { byte in
            (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        }
    }

    /// Nextcloud's journal `.sync_HASH.db` / `._sync_HASH.db` and SQLite's `-wal`, `-shm`, `-journal`
    /// companions (also of `.csync_journal.db`).
    private static func isNextcloudDatabase(_ name: String) -> Bool {
        var base = Substring(name)
        for companion in ["-wal", "-shm", "-journal"] where base.hasSuffix(companion) {
            base = base.dropLast(companion.count)
            break
        }
        if base == ".csync_journal.db" { return true }
        return [".sync_", "._sync_"].contains { hasAffixes(String(base), $0, ".db") }
    }
}
