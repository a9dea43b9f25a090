import Foundation
import Glibc
import SystemSupport

/// The two limits on every wait of one exchange: the idle timeout (no byte moved for that long:
/// the request's `timeoutInterval`) and the exchange's overall deadline. Each `poll(2)` waits at
/// most the shorter of the two; when it times out, the exchange fails with
/// ``HTTPFailure/timedOut``. Also carries the exchange's ``HTTPInterruption``.
struct HTTPWaitLimits: Sendable {
    /// Nanoseconds without progress before the exchange fails.
    let idleNanoseconds: UInt64
    /// The monotonic instant (`DispatchTime` nanoseconds) after which the exchange fails.
    let deadline: UInt64
    let interruption: HTTPInterruption

    init(idleTimeout: TimeInterval, overallDeadline: TimeInterval, interruption: HTTPInterruption) {
        idleNanoseconds = Self.nanoseconds(idleTimeout)
        let now = DispatchTime.now().uptimeNanoseconds
        let (sum, overflow) = now.addingReportingOverflow(Self.nanoseconds(overallDeadline))
        deadline = overflow ? .max : sum
        self.interruption = interruption
    }

    private static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 1_000_000 }
        return seconds >= 1e9 ? UInt64(1e18) : UInt64(seconds * 1e9)
    }

    /// Waits until `descriptor` is ready for `events` (`POLLIN`, `POLLOUT`), at most the idle
    /// timeout and never past the deadline. Returns the `revents`. Throws
    /// ``HTTPFailure/timedOut`` when nothing happened in time, ``HTTPFailure/cancelled`` when the
    /// exchange was interrupted.
    func wait(for descriptor: Int32, events: Int16) throws(HTTPFailure) -> Int16 {
        while true {
            if interruption.isInterrupted { throw .cancelled }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw .timedOut }
            let wait = min(idleNanoseconds, deadline - now)
            // Rounded up to whole milliseconds, and at most a day per call (poll takes an Int32).
            let milliseconds = Int32(min((wait + 999_999) / 1_000_000, 86_400_000))
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system("poll", Errno(rawValue: errno))
            }
            if interruption.isInterrupted { throw .cancelled }
            if ready == 0 {
                // The idle timeout or the deadline; either ends the exchange.
                throw .timedOut
            }
            return entry.revents
        }
    }

    /// Throws ``HTTPFailure/cancelled`` or ``HTTPFailure/timedOut`` when the exchange must stop now.
    func check() throws(HTTPFailure) {
        if interruption.isInterrupted { throw .cancelled }
        if DispatchTime.now().uptimeNanoseconds >= deadline { throw .timedOut }
    }
}
