import Synchronization

/// A cancellation flag that wakes whoever is waiting on it.
///
/// Each ``Coordinator`` owns one (``Coordinator/cancel()`` trips it); an `async` coordination also
/// makes one per call for its `Task`'s cancellation. Waits register a wake-up closure and are woken
/// at once when the token is cancelled; closures run on the thread that calls ``cancel()``.
final class CancellationToken: Sendable {
    private struct State {
        var isCancelled = false
        var nextID = 0
        var wakeups: [Int: @Sendable () -> Void] = [:]
    }
    private let state = Locked(State())

    init() {}

    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Trips the token and runs every registered wake-up once. Later calls do nothing.
    func cancel() {
        let wakeups: [@Sendable () -> Void] = state.withLock { state in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            defer { state.wakeups.removeAll() }
            return Array(state.wakeups.values)
        }
        for wake in wakeups { wake() }
    }

    /// Registers `wake` to run on cancellation. Returns nil (and does not register) when the
    /// token is already cancelled.
    func onCancel(_ wake: @escaping @Sendable () -> Void) -> Int? {
        state.withLock { state in
            guard !state.isCancelled else { return nil }
            state.nextID += 1
            state.wakeups[state.nextID] = wake
            return state.nextID
        }
    }

    func removeWakeup(_ id: Int?) {
        guard let id else { return }
        _ = state.withLock { $0.wakeups.removeValue(forKey: id) }
    }
}

/// Everything that can end a wait early: a deadline, the coordinator's cancellation token and,
/// for `async` calls, the task's.
struct WaitContext: Sendable {
    var deadline: ContinuousClock.Instant?
    let token: CancellationToken
    let taskToken: CancellationToken?

    init(timeout: Duration?, token: CancellationToken, taskToken: CancellationToken? = nil) {
        self.deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        self.token = token
        self.taskToken = taskToken
    }

    var isCancelled: Bool { token.isCancelled || (taskToken?.isCancelled ?? false) }

    /// Throws `.cancelled` or `.timedOut` when the wait must end now.
    func check() throws(CoordinationError) {
        if isCancelled { throw .cancelled }
        if let deadline, ContinuousClock.now >= deadline { throw .timedOut }
    }

    /// Registers `wake` with the tokens; returns a closure that unregisters. Runs `wake` at once
    /// when a token is already cancelled.
    func onCancel(_ wake: @escaping @Sendable () -> Void) -> () -> Void {
        let first = token.onCancel(wake)
        let second = taskToken?.onCancel(wake)
        if first == nil || (taskToken != nil && second == nil) { wake() }
        return { [token, taskToken] in
            token.removeWakeup(first)
            taskToken?.removeWakeup(second)
        }
    }
}

extension ContinuousClock.Instant {
    /// Seconds from now until this instant (negative when past), for `Date`-based waits.
    var secondsFromNow: Double {
        let left = self - ContinuousClock.now
        return Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
    }
}
