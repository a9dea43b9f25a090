import FileCoordination

/// Cheap byte tests run on every name a query walks, before the naming rules of
/// Sources/CloudDocuments/SyncTools (which parse, allocate and hash) are asked. Conservative:
/// they answer "maybe" for every name those rules can recognise, so the rules decide every real
/// case; they only spare the rules the ordinary names (nearly all of them).
enum ResultNameFilter {
    /// Whether `SyncInternalItems.item(named:)` may recognise a name that does not start with a
    /// dot (the walk skips those): its other rules are a leading `~` and the suffixes `~`, `.part`,
    /// `.filepart`, `.partial` and `.!sync`.
    static func mayBeInternal<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bool {
        guard let first = bytes.first, let last = bytes.last else { return false }
        if first == UInt8(ascii: "~") || last == UInt8(ascii: "~") { return true }
        return bytes.reversed().starts(with: "trap".utf8) || bytes.reversed().starts(with: "laitrap.".utf8)
            || bytes.reversed().starts(with: "cnys!.".utf8)
    }

    /// Whether `SyncConflictNaming.conflictCopy(named:)` (with default options, as the folder-wide
    /// `conflictGroups(in:)` uses it) may recognise the name: every scheme it then knows has
    /// `conflict` in its tag, except rclone's `..pathN` and OneDrive's `-safeBackup-` — the same
    /// cheap tests the parser starts with.
    static func mayBeConflictCopy<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        contains(bytes, "conflict") || contains(bytes, "..path") || contains(bytes, "safeBackup")
    }

    private static func contains<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ marker: StaticString) -> Bool {
        let count = marker.utf8CodeUnitCount
        let pattern = UnsafeBufferPointer(start: marker.utf8Start, count: count)
        guard bytes.count >= count else { return false }
        var start = bytes.startIndex
        let lastStart = bytes.index(bytes.endIndex, offsetBy: -count)
        while true {
            if bytes[start] == pattern[0], bytes[start...].starts(with: pattern) { return true }
            if start == lastStart { return false }
            bytes.formIndex(after: &start)
        }
    }
}

/// The cheap byte test for an evicted item's placeholder name (`.NAME.clouddocs-placeholder`),
/// run on hidden names in ubiquitous scopes before ``ItemPlaceholder/itemName(forPlaceholderNamed:)``.
enum PlaceholderNameFilter {
    /// ``ItemPlaceholder/nameSuffix`` as static bytes: the test compares them with the end of the
    /// name directly (no reversed views, no generic metadata looked up per name — it runs once per
    /// evicted item a query gathers).
    private static let suffix: StaticString = ".clouddocs-placeholder"

    /// Whether `bytes` end in the placeholder suffix with at least one byte before it.
    static func mayBePlaceholder(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard bytes.count > count + 1 else { return false }
        let start = bytes.endIndex - count
        return suffix.withUTF8Buffer { pattern in
            for offset in 0..<count where bytes[start + offset] != pattern[offset] { return false }
            return true
        }
    }

    /// As ``mayBePlaceholder(_:)-(Slice<UnsafeRawBufferPointer>)``, for bytes held elsewhere.
    static func mayBePlaceholder<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        Array(bytes).withUnsafeBytes { mayBePlaceholder($0[...]) }
    }
}
