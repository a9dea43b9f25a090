import FileCoordination
import Foundation

/// A mixed load of reads, writes and reads upgraded to writes (plain and group mode) that
/// increment the counter in `url`: run by the helper's `mix` command in other processes and by
/// the lock-protocol tests on threads. Returns the increments made, the `.wouldDeadlock`s met
/// (expected for racing upgraders) and the first other error.
public func mixedAccesses(_ url: URL, times: Int, seed: Int) -> (increments: Int, deadlocks: Int, error: String?) {
    var increments = 0, deadlocks = 0
    func increment(_ url: URL) throws {
        let value = Int((try? String(contentsOf: url, encoding: .utf8)) ?? "") ?? -1_000_000
        try String(value + 1).write(to: url, atomically: false, encoding: .utf8)
    }
    for step in 0..<times {
        let c = Coordinator()
        if (seed + step) % 4 == 0 { _ = c.purposeIdentifier }  // group mode, a purpose of its own
        do {
            switch (seed * 7 + step) % 3 {
            case 0:
                try c.coordinate(readingItemAt: url) { url in try c.coordinate(writingItemAt: url, byAccessor: increment) }
                increments += 1
            case 1:
                try c.coordinate(writingItemAt: url, byAccessor: increment)
                increments += 1
            default:
                try c.coordinate(readingItemAt: url) { _ in }
            }
        } catch CoordinationError.wouldDeadlock {
            deadlocks += 1
        } catch {
            return (increments, deadlocks, "\(error)")
        }
    }
    return (increments, deadlocks, nil)
}
