/// The unapproved deletions recent passes carried out, both ways, for the mass-deletion guard's
/// burst window (``SyncGuards/deletionBurstWindow``). Kept in memory: an agent restarted in the
/// middle of another device's deletion run judges the rest of it afresh.
struct DeletionBurst: Sendable {
    private var fromServer: [ContinuousClock.Instant] = []
    private var madeHere: [ContinuousClock.Instant] = []

    /// Records one deletion carried out now.
    mutating func record(fromServer server: Bool, at now: ContinuousClock.Instant = .now) {
        if server { fromServer.append(now) } else { madeHere.append(now) }
    }

    /// Forgets deletions older than `window` seconds and returns how many of each direction remain.
    mutating func counts(window: Double, now: ContinuousClock.Instant = .now) -> (fromServer: Int, madeHere: Int) {
        let since = now - .milliseconds(Int64(max(0, min(window, 1e9)) * 1000))
        fromServer.removeAll { $0 < since }
        madeHere.removeAll { $0 < since }
        return (fromServer.count, madeHere.count)
    }
}
