import Foundation
import Testing
@testable import CloudDocuments

// Helpers shared by the tests that run real Syncthing and rclone (SyncthingConflictTests,
// RcloneBisyncConflictTests). The fixtures themselves are in Tests/TestSupport.

/// The sync tools' conflict copies of `original` in `folder`, by name (SyncConflictNaming), sorted
/// by name.
func conflictCopies(of original: String, in folder: URL) -> [SyncConflictCopy] {
    listing(folder).compactMap { SyncConflictNaming.conflictCopy(named: $0) }
        .filter { $0.originalName == original }
        .sorted { $0.name < $1.name }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout`; returns how long it
/// took. Throws `Polling.TimedOut` (which fails the test) when it does not happen.
@discardableResult
func waitFor(_ what: @autoclosure () -> String, timeout: Duration = .seconds(20),
             isolation: isolated (any Actor)? = #isolation,
             _ condition: () async throws -> Bool) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try await Polling.until(what(), timeout: timeout, interval: .milliseconds(10), condition)
    return clock.now - start
}

/// Milliseconds, for the measurements the tests print.
func milliseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
}

/// Prints one measurement line of the real-tool tests (collected in the report of the suite run).
func report(_ line: String) {
    print("[real tools] \(line)")
}

/// How long a document may take to gain or lose `.inConflict` after a conflict copy appears or
/// disappears, in these tests. The promise is 250 ms (measured by the benchmark); the tests allow
/// 4× that on a loaded 2-core CI machine, and print what they measured.
let liveConflictDeadline = Duration.milliseconds(1000)
