import Foundation
import Glibc
import Synchronization

/// Ends kernel lock waits (`F_OFD_SETLKW`) early, for timeouts and cancellation.
///
/// A thread asleep in `F_OFD_SETLKW` wakes only when the lock is granted or a signal arrives. To
/// bound a wait, the waiting thread registers here; at its deadline, or when its coordinator is
/// cancelled, one background thread sends it `SIGURG` with `pthread_kill`. A no-op `SIGURG`
/// handler installed without `SA_RESTART` makes the `fcntl` return `EINTR`, and the waiter then
/// checks why it woke. (`SIGURG` is ignored by default and almost never used; the Go runtime uses
/// it for the same purpose. If the host program has its own `SIGURG` handler, it is left alone.)
///
/// A signal sent just before the waiter enters the kernel would be lost, so the background
/// thread repeats the signal every 2 ms until the waiter leaves — this only happens after a wait
/// has already been told to end; a lock wait itself never polls.
final class KernelWaitInterrupter: @unchecked Sendable {
    // @unchecked: every mutable field below is read and written only while `condition` is locked.
    static let shared = KernelWaitInterrupter()

    enum Reason { case timedOut, cancelled }

    private struct Registration {
        var thread: pthread_t
        var deadline: ContinuousClock.Instant?
        var reason: Reason?
        var lastSignal: ContinuousClock.Instant?
    }

    private let condition = NSCondition()
    private var registrations: [Int: Registration] = [:]
    private var nextID = 0
    private var started = false

    private init() {
        Self.installHandler()
    }

    private static func installHandler() {
        var current = sigaction()
        guard sigaction(SIGURG, nil, &current) == 0 else { return }
        let existing = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
        let defaultHandler = unsafeBitCast(SIG_DFL, to: Int.self)
        let ignore = unsafeBitCast(SIG_IGN, to: Int.self)
        guard existing == defaultHandler || existing == ignore else { return }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        action.sa_flags = 0  // no SA_RESTART: blocking fcntl returns EINTR
        sigemptyset(&action.sa_mask)
        sigaction(SIGURG, &action, nil)
    }

    /// Registers the calling thread for a kernel wait.
    func register(deadline: ContinuousClock.Instant?) -> Int {
        condition.lock()
        defer { condition.unlock() }
        nextID += 1
        registrations[nextID] = Registration(thread: pthread_self(), deadline: deadline)
        if !started {
            started = true
            let thread = Thread { [self] in self.run() }
            thread.name = "FileCoordination.interrupter"
            thread.start()
        }
        condition.signal()
        return nextID
    }

    /// Why the wait was told to end, if it was.
    func reason(_ id: Int) -> Reason? {
        condition.lock()
        defer { condition.unlock() }
        return registrations[id]?.reason
    }

    /// Asks for the registered thread to be woken now (cancellation). Any thread may call this.
    func interrupt(_ id: Int) {
        condition.lock()
        defer { condition.unlock() }
        if registrations[id] != nil, registrations[id]?.reason == nil {
            registrations[id]?.reason = .cancelled
        }
        condition.signal()
    }

    func unregister(_ id: Int) {
        condition.lock()
        registrations.removeValue(forKey: id)
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            let now = ContinuousClock.now
            var nextWake: ContinuousClock.Instant?
            for (id, var registration) in registrations {
                if registration.reason == nil, let deadline = registration.deadline, deadline <= now {
                    registration.reason = .timedOut
                }
                if registration.reason != nil {
                    if registration.lastSignal.map({ now - $0 >= .milliseconds(2) }) ?? true {
                        pthread_kill(registration.thread, SIGURG)
                        registration.lastSignal = now
                    }
                    let again = (registration.lastSignal ?? now).advanced(by: .milliseconds(2))
                    nextWake = min(nextWake ?? again, again)
                } else if let deadline = registration.deadline {
                    nextWake = min(nextWake ?? deadline, deadline)
                }
                registrations[id] = registration
            }
            if let nextWake {
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(nextWake.secondsFromNow, 0)))
            } else {
                condition.wait()
            }
        }
    }
}
