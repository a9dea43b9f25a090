/// The thresholds of the planner's guards (see ``SyncPlanner``).
public struct SyncGuards: Sendable, Hashable {
    /// A deletion from the server is held when it would delete more than this share of the
    /// container's synced items here (default: more than half)…
    public var heldDeletionShare: Double
    /// …counted only when at least this many items would go (deleting the one file of a
    /// one-file container is ordinary work), default 5;
    public var heldDeletionShareMinimum: Int
    /// …or more than this many items, whatever the share (default 100).
    public var heldDeletionMaximum: Int
    /// The server is treated as replaced or rolled back when, of the synced files it still has,
    /// more than half carry a tag the journal never recorded — counted only when the journal
    /// knows tags for at least this many of them (default 8; below, one device's edits of every
    /// file of a small container would look the same).
    public var replacementMinimumItems: Int
    /// Files this device uploaded as new less than this many seconds ago (default a day) are
    /// "recent additions": when the server lacks most of them at once — at least
    /// ``recentAdditionMinimum`` — their deletion here is held until approved (a server rolled
    /// back to a copy older than them shows nothing but those deletions).
    public var recentAdditionWindow: Double = 86_400
    /// See ``recentAdditionWindow`` (default 2).
    public var recentAdditionMinimum: Int = 2
    /// Deletions carried out without approval in the passes of the last this many seconds
    /// (default 120) count toward a pass's mass-deletion guard: another device's deletion run
    /// reaches the server one item at a time, and a poll that sees only its first items must not
    /// let the rest through a pass at a time.
    public var deletionBurstWindow: Double = 120
    /// A file whose tag was read after an upload (unverified: see `JournalEntry.tagUnverified`)
    /// is compared byte for byte by the next pass up to this size (default 16 MiB).
    public var unverifiedTagCheckLimit: Int64 = 16 << 20

    public init(heldDeletionShare: Double = 0.5, heldDeletionShareMinimum: Int = 5,
                heldDeletionMaximum: Int = 100, replacementMinimumItems: Int = 8) {
        self.heldDeletionShare = heldDeletionShare
        self.heldDeletionShareMinimum = heldDeletionShareMinimum
        self.heldDeletionMaximum = heldDeletionMaximum
        self.replacementMinimumItems = replacementMinimumItems
    }
}
