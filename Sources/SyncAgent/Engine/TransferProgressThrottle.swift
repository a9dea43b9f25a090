import FileCoordination
import Foundation

/// Lets a transfer's progress through to the status at most every ``interval`` (and always its
/// end): the status is published — written to the agent's status file, flushed — from the
/// transport's own thread, and once per percent that cost 100 small durable writes in the middle
/// of every large download or upload. Ten a second still show a live percentage.
///
/// Any thread (called from the transport's progress callback).
final class TransferProgressThrottle: Sendable {
    static let interval: Duration = .milliseconds(100)

    private let last = Locked<ContinuousClock.Instant?>(nil)

    /// Whether the progress `done` of `total` is reported now.
    func admits(done: Int64, total: Int64?) -> Bool {
        if let total, done >= total { return true }
        let now = ContinuousClock.now
        return last.withLock { last in
            if let previous = last, now - previous < Self.interval { return false }
            last = now
            return true
        }
    }
}
