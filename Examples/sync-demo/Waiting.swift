import Foundation

/// Waits for a condition the other processes bring about (a file's contents, a status file),
/// checking it every 50 ms. Not a sleep used as synchronisation: the condition decides; the bound
/// only turns a demo that is stuck into a clear message.
enum Waiting {
    /// How long any one condition may take before the demo gives up.
    static let bound: Duration = .seconds(60)

    /// Returns once `condition` holds; throws ``DemoFailure`` naming `what` (and `details()`, such
    /// as the agents' logs) after ``bound``. Runs on the caller's actor: on the main actor, open
    /// documents keep receiving their messages between checks.
    static func until(_ what: String, isolation: isolated (any Actor)? = #isolation, details: () -> String = { "" },
                      _ condition: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + bound
        while true {
            if try condition() { return }
            guard ContinuousClock.now < deadline else {
                throw DemoFailure("gave up waiting (\(bound)) until \(what)\n\(details())")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
