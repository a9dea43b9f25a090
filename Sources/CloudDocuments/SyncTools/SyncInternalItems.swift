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

    package init(owner: SyncInternalItemOwner, kind: SyncInternalItemKind) {
        self.owner = owner
        self.kind = kind
    }
}

/// Recognises internal items by name. Thread-safe (pure functions).
package enum SyncInternalItems {
    /// The internal item `name` (one file name, a lossless path string) is, or nil for other names.
    package static func item(named name: String) -> SyncInternalItem? {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return nil }
        // Names starting with neither `.` nor `~` can only match a suffix rule.
        if first == UInt8(ascii: "."), let item = dotItem(name, bytes) { return item }
        if first == UInt8(ascii: "~") {
            if has(bytes, "~syncthing~", ".tmp") { return SyncInternalItem(owner: .syncthing, kind: .transferTemporary) }
            if has(bytes, "~$", "") { return SyncInternalItem(owner: .office, kind: .lockOrSwap) }
        }
        if has(bytes, "", ".part") || has(bytes, "", ".filepart") {
            return SyncInternalItem(owner: .nextcloud, kind: .transferTemporary)
        }
        if has(bytes, "", ".partial") { return SyncInternalItem(owner: .rcloneOrOneDrive, kind: .transferTemporary) }
        if has(bytes, "", ".!sync") { return SyncInternalItem(owner: .resilio, kind: .transferTemporary) }
        if has(bytes, "", "~") { return SyncInternalItem(owner: .editor, kind: .editorBackup) }
        return nil
    }

    /// The rules for names starting with a dot.
    private static func dotItem(_ name: String, _ bytes: [UInt8]) -> SyncInternalItem? {
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
        // Syncthing's `.syncthing.NAME.tmp` (NAME is a SHA-256 in hex for long names).
        if has(bytes, ".syncthing.", ".tmp") { return item(.syncthing, .transferTemporary) }
        // Unison: `.unison.NAME.HASH.unison.tmp`; before 2.40 `.#NAME.HASH.unison.tmp`.
        if has(bytes, ".", ".unison.tmp") { return item(.unison, .transferTemporary) }
        if isNextcloudDownload(bytes) { return item(.nextcloud, .transferTemporary) }
        if isNextcloudDatabase(name) { return item(.nextcloud, .toolMetadata) }
        if bytes.starts(with: ".dat.nosync".utf8) { return item(.foundation, .transferTemporary) }
        if has(bytes, ".~lock.", "#") { return item(.office, .lockOrSwap) }
        if has(bytes, ".", ".swp") || has(bytes, ".#", "") { return item(.editor, .lockOrSwap) }
        return nil
    }

    /// True when `bytes` start with `prefix`, end with `suffix` and have at least one byte between.
    private static func has(_ bytes: [UInt8], _ prefix: StaticString, _ suffix: StaticString) -> Bool {
        let prefixLength = prefix.utf8CodeUnitCount, suffixLength = suffix.utf8CodeUnitCount
        guard bytes.count > prefixLength + suffixLength else { return false }
        let prefixBytes = UnsafeBufferPointer(start: prefix.utf8Start, count: prefixLength)
        let suffixBytes = UnsafeBufferPointer(start: suffix.utf8Start, count: suffixLength)
        return bytes[..<prefixLength].elementsEqual(prefixBytes)
            && bytes[(bytes.count - suffixLength)...].elementsEqual(suffixBytes)
    }

    /// Nextcloud's download temporary `.NAME.~HEX`: 1 to 8 lower-case hex digits (an unpadded
    /// random 32-bit number).
    private static func isNextcloudDownload(_ bytes: [UInt8]) -> Bool {
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
        let baseBytes = Array(base.utf8)
        return has(baseBytes, ".sync_", ".db") || has(baseBytes, "._sync_", ".db")
    }
}
