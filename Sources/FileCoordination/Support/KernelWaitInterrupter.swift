import Foundation
import Glibc
import Synchronization

/// Ends kernel lock waits (`F_OFD_SETLKW`) early, for timeouts and cancellation.
///
/// A thread asleep in `F_OFD_SETLKW` wakes only when the lock is granted or a signal arrives. To
/// bound a wait, the waiting thread registers here; at its deadline, or when its coordinator is
/// cancelled, one background thread sends it the *wake signal* with `pthread_kill`. Our no-op
/// handler for that signal is installed without `SA_RESTART`, so the `fcntl` returns `EINTR`, and
/// the waiter then checks why it woke.
///
/// ## Which signal
/// The wake signal is a **real-time signal that nobody else uses**, chosen at the first wait:
/// the highest one from `SIGRTMAX` down to `SIGRTMIN` whose disposition is still the default
/// (libraries that pick real-time signals usually take them from `SIGRTMIN` up). The host
/// program's own handlers — a `SIGURG` handler installed with `SA_RESTART` by a Go-style runtime,
/// for example — are never touched and cannot disable our timeouts. Before every wait, the
/// waiting thread checks (one `sigaction` read) that our handler is still installed; if someone
/// replaced it, a fresh free real-time signal is chosen and used from then on. Only when every
/// real-time signal is taken does it fall back to `SIGURG` (ignored by default), and only if the
/// host left `SIGURG` alone; otherwise kernel waits cannot be interrupted (timeouts and
/// `cancel()` then take effect once the lock is granted) — see Docs/Coordination.md.
///
/// A signal sent just before the waiter enters the kernel would be lost, so the background
/// thread repeats the signal every 2 ms until the waiter leaves — this only happens after a wait
/// has already been told to end; a lock wait itself never polls.
final class KernelWaitInterrupter: @unchecked Sendable {
    // @unchecked: every mutable field below is read and written only while `condition` is locked.
    /// Process-wide, not per `CoordinationRuntime`: signal dispositions and the threads a signal
    /// interrupts belong to the process.
    static let shared = KernelWaitInterrupter()

    enum Reason { case timedOut, cancelled }

    private struct Registration {
        var thread: pthread_t
        var signal: Int32?
        var deadline: ContinuousClock.Instant?
        var reason: Reason?
        var lastSignal: ContinuousClock.Instant?
    }

    private let condition = NSCondition()
    private var registrations: [Int: Registration] = [:]
    private var nextID = 0
    private var started = false
    /// The wake signal in use, once chosen; nil when none could be installed.
    private var wakeSignal: Int32?
    private var chosen = false

    private init() {}

    /// Registers the calling thread for a kernel wait. Returns the registration and the signal
    /// the thread must leave unblocked while it waits (nil: the wait cannot be interrupted).
    func register(deadline: ContinuousClock.Instant?) -> (id: Int, signal: Int32?) {
        condition.lock()
        defer { condition.unlock() }
        let signal = checkedWakeSignal()
        nextID += 1
        registrations[nextID] = Registration(thread: pthread_self(), signal: signal, deadline: deadline)
        if !started {
            started = true
            let thread = Thread { [self] in self.run() }
            thread.name = "FileCoordination.interrupter"
            thread.start()
        }
        condition.signal()
        return (nextID, signal)
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

    /// Ends the registration. After it returns no wake signal is sent to the thread for this
    /// wait, so it may block the signal again.
    func unregister(_ id: Int) {
        condition.lock()
        registrations.removeValue(forKey: id)
        condition.unlock()
    }

    /// The wake signal for the next wait, with our handler verified to be installed on it.
    /// Call with `condition` locked.
    private func checkedWakeSignal() -> Int32? {
        if chosen, let signal = wakeSignal, WakeSignal.isOurs(signal) { return signal }
        if chosen, wakeSignal == nil { return nil }
        chosen = true
        wakeSignal = WakeSignal.installOnFreeSignal()
        return wakeSignal
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
                if registration.reason != nil, let signal = registration.signal {
                    if registration.lastSignal.map({ now - $0 >= .milliseconds(2) }) ?? true {
                        // Never send a signal whose handler is no longer ours: its default
                        // action (for a real-time signal) would end the process.
                        if WakeSignal.isOurs(signal) { pthread_kill(registration.thread, signal) }
                        registration.lastSignal = now
                    }
                    let again = (registration.lastSignal ?? now).advanced(by: .milliseconds(2))
                    nextWake = min(nextWake ?? again, again)
                } else if registration.reason == nil, let deadline = registration.deadline {
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

/// Choosing and checking the signal that interrupts kernel waits.
enum WakeSignal {
    /// Our handler: does nothing. Being installed without `SA_RESTART` is the whole point.
    private static let handler: @convention(c) (Int32) -> Void = { _ in }

    private static var handlerAddress: Int { unsafeBitCast(handler, to: Int.self) }

    /// True when `signal`'s handler is ours.
    static func isOurs(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == handlerAddress
    }

    /// Installs our handler on a signal nobody uses and returns it: the highest real-time signal
    /// still at its default disposition, else `SIGURG` if the host left it alone, else nil.
    static func installOnFreeSignal() -> Int32? {
        let lowest = __libc_current_sigrtmin(), highest = __libc_current_sigrtmax()
        if lowest <= highest {
            for signal in stride(from: highest, through: lowest, by: -1) where hasDefaultDisposition(signal) {
                if install(on: signal) { return signal }
            }
        }
        if hasDefaultDisposition(SIGURG) || isIgnored(SIGURG), install(on: SIGURG) { return SIGURG }
        return nil
    }

    private static func hasDefaultDisposition(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_DFL, to: Int.self)
    }

    private static func isIgnored(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    private static func install(on signal: Int32) -> Bool {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = 0  // no SA_RESTART: blocking fcntl returns EINTR
        sigemptyset(&action.sa_mask)
        return sigaction(signal, &action, nil) == 0
    }
}
