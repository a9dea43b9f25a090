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
    /// `State.isCancelled`, also readable without the lock (every coordination reads it; only
    /// `cancel` writes it, under the lock, so registration and cancellation still agree).
    private let cancelled = Atomic<Bool>(false)
    /// The locked state, made on the first registration or cancellation — most tokens (one per
    /// coordinator, which usually never waits) see neither, and a coordinator made for one access
    /// then costs one allocation less. 0: not made yet; otherwise a retained `Locked<State>`.
    private let stateBits = Atomic<UInt>(0)

    init() {}

    deinit {
        let bits = stateBits.load(ordering: .acquiring)
        if bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) {
            Unmanaged<Locked<State>>.fromOpaque(pointer).release()
        }
    }

    private var state: Locked<State> {
        let bits = stateBits.load(ordering: .acquiring)
        if bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) {
            return Unmanaged<Locked<State>>.fromOpaque(pointer).takeUnretainedValue()
        }
        let made = Unmanaged.passRetained(Locked(State()))
        let madeBits = UInt(bitPattern: made.toOpaque())
        let (exchanged, original) = stateBits.compareExchange(expected: 0, desired: madeBits, ordering: .acquiringAndReleasing)
        if exchanged { return made.takeUnretainedValue() }
        made.release()  // another thread made it first
        return Unmanaged<Locked<State>>.fromOpaque(UnsafeRawPointer(bitPattern: original)!).takeUnretainedValue()
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Trips the token and runs every registered wake-up once. Later calls do nothing.
    func cancel() {
        let wakeups: [@Sendable () -> Void] = state.withLock { state in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            cancelled.store(true, ordering: .releasing)
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
        _ = state.withLock { $0.wakeups.removeValue(forKey: id) }  // (an id means the state was made)
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
