import Foundation
import Glibc

/// Waiting for a state that gives the test no signal of its own (a file another program writes,
/// a thread sleeping in the kernel, Syncthing's REST API): the condition is checked again and
/// again until it holds. The one polling helper of every test target.
///
/// The deadline is a hang guard only: it ends a wait that went wrong, so that the test fails
/// instead of hanging, and is never what a test asserts under ordinary load — a slow machine only
/// makes the wait take longer. The interval only paces the checks; nothing relies on how long a
/// step takes.
public enum Polling {
    /// The deadline used unless a wait names its own: generous, as it only guards against a hang.
    public static let hangGuard: Duration = .seconds(60)

    /// How many times longer every deadline is in this run: 5 under ThreadSanitizer (which makes
    /// the code under test 5 to 15 times slower, so a whole suite run in one process meets
    /// deadlines made for ordinary runs), 1 otherwise; `CLOUDDOCS_TEST_DEADLINE_SCALE` (a whole
    /// number from 1 to 100) overrides both. Only failing waits take longer.
    public static let deadlineScale: Int = {
        if let text = ProcessInfo.processInfo.environment["CLOUDDOCS_TEST_DEADLINE_SCALE"], let value = Int(text),
           (1...100).contains(value) {
            return value
        }
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil ? 5 : 1
    }()

    /// `timeout` times ``deadlineScale``.
    public static func scaled(_ timeout: Duration) -> Duration { timeout * deadlineScale }

    /// The hang guard as a `DispatchTime` deadline from now, for waits on a semaphore or a
    /// condition (which need no polling: they only need a deadline).
    public static func deadline(after timeout: Duration = hangGuard) -> DispatchTime {
        let timeout = scaled(timeout)
        return .now() + .nanoseconds(Int(timeout.components.seconds) * 1_000_000_000 + Int(timeout.components.attoseconds / 1_000_000_000))
    }

    /// A condition did not hold before its deadline.
    public struct TimedOut: Error, CustomStringConvertible {
        public let description: String
    }

    /// Checks `condition` every `interval` until it returns true; throws ``TimedOut`` naming `what`
    /// (and `details()`, e.g. a log tail) when `timeout` passes first. Errors thrown by `condition`
    /// end the wait at once.
    public static func until(_ what: String, timeout: Duration = hangGuard,
                             interval: Duration = .milliseconds(20),
                             details: () -> String = { "" },
                             isolation: isolated (any Actor)? = #isolation,
                             _ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let timeout = scaled(timeout)
        let deadline = clock.now + timeout
        while true {
            if try await condition() { return }
            if clock.now >= deadline { throw timedOut(what, timeout, details()) }
            try await Task.sleep(for: interval)
        }
    }

    /// The same for synchronous code: blocks the calling thread (so never call it on a
    /// cooperative thread for long — see ``offCooperativePool(_:)``).
    public static func blockUntil(_ what: String, timeout: Duration = hangGuard,
                             interval: Duration = .microseconds(200),
                             details: () -> String = { "" },
                             _ condition: () throws -> Bool) throws {
        let clock = ContinuousClock()
        let timeout = scaled(timeout)
        let deadline = clock.now + timeout
        let pause = useconds_t(max(1, interval.components.seconds * 1_000_000
                                      + interval.components.attoseconds / 1_000_000_000_000))
        while true {
            if try condition() { return }
            if clock.now >= deadline { throw timedOut(what, timeout, details()) }
            sched_yield()
            usleep(pause)
        }
    }

    /// Whether `condition` comes to hold before `timeout` (the synchronous form, for helpers that
    /// report a Bool).
    public static func holds(within timeout: Duration = hangGuard, interval: Duration = .microseconds(200),
                             _ condition: () -> Bool) -> Bool {
        (try? blockUntil("", timeout: timeout, interval: interval, condition)) != nil
    }

    private static func timedOut(_ what: String, _ timeout: Duration, _ details: String) -> TimedOut {
        TimedOut(description: "timed out after \(timeout) waiting for \(what)" + (details.isEmpty ? "" : "\n\(details)"))
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
