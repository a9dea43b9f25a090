/// The endpoint thread's log of what it dropped: at most `linesPerMinute` lines a minute, so a
/// peer that connects (or misbehaves) in a loop cannot flood standard error. The lines left out
/// are counted in the next line written. Used by the endpoint's thread alone.
struct DropLog {
    static let linesPerMinute = 60
    private var windowStart = ContinuousClock.now
    private var written = 0
    private var skipped = 0

    mutating func dropped(_ what: String) {
        let now = ContinuousClock.now
        if now - windowStart >= .seconds(60) {
            windowStart = now
            written = 0
        }
        guard written < Self.linesPerMinute else {
            skipped += 1
            return
        }
        written += 1
        let more = skipped > 0 ? " (and \(skipped) more not logged)" : ""
        skipped = 0
        RemoteLog.dropped(what + more)
    }
}
