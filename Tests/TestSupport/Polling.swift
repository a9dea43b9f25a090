import Foundation

/// Waiting for an external program (Syncthing, rclone) to reach a state: the condition is checked
/// again and again until it holds, with a deadline. The interval only paces the checks; nothing
/// relies on how long a step takes.
public enum Polling {
    /// A condition did not hold before its deadline.
    public struct TimedOut: Error, CustomStringConvertible {
        public let description: String
    }

    /// Checks `condition` every `interval` until it returns true; throws ``TimedOut`` naming `what`
    /// (and `details()`, e.g. a log tail) when `timeout` passes first. Errors thrown by `condition`
    /// end the wait at once.
    public static func until(_ what: @autoclosure () -> String, timeout: Duration = .seconds(30),
                             interval: Duration = .milliseconds(20),
                             details: () -> String = { "" },
                             isolation: isolated (any Actor)? = #isolation,
                             _ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if try await condition() { return }
            if clock.now >= deadline {
                let extra = details()
                throw TimedOut(description: "timed out after \(timeout) waiting for \(what())"
                               + (extra.isEmpty ? "" : "\n\(extra)"))
            }
            try await Task.sleep(for: interval)
        }
    }
}

/// Runs blocking work (starting a program and waiting for it, stopping one) on a thread of its own,
/// so that it does not hold one of Swift's few cooperative threads (2 on a 2-core CI machine) while
/// other tests want them.
public func offCooperativePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
