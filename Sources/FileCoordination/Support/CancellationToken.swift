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
    private let state = Mutex(State())

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

/// Everything that can end a wait early: a deadline and the cancellation tokens in force.
struct WaitContext: Sendable {
    var deadline: ContinuousClock.Instant?
    var tokens: [CancellationToken]

    init(timeout: Duration?, tokens: [CancellationToken]) {
        self.deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        self.tokens = tokens
    }

    /// Throws `.cancelled` or `.timedOut` when the wait must end now.
    func check() throws(CoordinationError) {
        if tokens.contains(where: { $0.isCancelled }) { throw .cancelled }
        if let deadline, ContinuousClock.now >= deadline { throw .timedOut }
    }

    /// Registers `wake` with every token; returns a closure that unregisters.
    func onCancel(_ wake: @escaping @Sendable () -> Void) -> () -> Void {
        let ids = tokens.map { ($0, $0.onCancel(wake)) }
        if ids.contains(where: { $0.1 == nil }) { wake() }
        return { for (token, id) in ids { token.removeWakeup(id) } }
    }
}
