import Foundation

/// Waits for presenters to answer a round of messages (each answer is one call of the block or
/// completion handler they were given), collecting reacquirers and the first error.
///
/// Answers may arrive on any thread; the waiting thread sleeps on a condition variable until all
/// answers are in, the deadline passes or the coordination is cancelled. Answers from other
/// processes to a coordination without a deadline are awaited at most their limit
/// (`limit(_:cutOff:)`): the waiting thread itself gives each one still outstanding then its
/// fallback — no timer, no other thread.
final class AnswerCollector: @unchecked Sendable {
    // @unchecked: all mutable state is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var outstanding: Int
    private var firstError: (any Error)?
    private var reacquirers: [Reacquirer] = []
    private var wokenForCancel = false
    /// Set once the asker gave up waiting: a relinquishment answered later is given back at once.
    private var abandoned = false
    /// When the answers of `cutOffs` stop being awaited (`limit(_:cutOff:)`).
    private var limitDeadline: ContinuousClock.Instant?
    /// What to run, without the lock, for answers not in by `limitDeadline`: each gives its
    /// fallback answer unless the real one came first.
    private var cutOffs: [@Sendable () -> Void] = []

    init(expecting count: Int) { outstanding = count }

    /// Records one answer. Extra answers (a presenter calling its handler twice) are ignored.
    func answer(error: (any Error)? = nil, reacquirer: Reacquirer? = nil) {
        condition.lock()
        if abandoned {
            condition.unlock()
            reacquirer?.send()  // too late: the access is not happening, give the item back
            return
        }
        defer { condition.unlock() }
        guard outstanding > 0 else { return }
        outstanding -= 1
        if let error, firstError == nil { firstError = error }
        if let reacquirer { reacquirers.append(reacquirer) }
        condition.broadcast()
    }

    /// Awaits one answer at most `milliseconds` from now: then `cutOff` runs on the waiting
    /// thread (it answers with a fallback unless the real answer came first). Call before the
    /// request is sent.
    func limit(_ milliseconds: Int, cutOff: @escaping @Sendable () -> Void) {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(milliseconds))
        condition.lock()
        defer { condition.unlock() }
        limitDeadline = min(limitDeadline ?? deadline, deadline)
        cutOffs.append(cutOff)
    }

    /// Blocks until every answer is in. Throws `.presenterFailed` for the first error answered,
    /// `.timedOut` or `.cancelled` as the context says. Returns the reacquirers received.
    func wait(_ context: WaitContext) throws(CoordinationError) -> [Reacquirer] {
        let stopObserving = context.onCancel { [self] in
            condition.lock(); wokenForCancel = true; condition.broadcast(); condition.unlock()
        }
        defer { stopObserving() }
        condition.lock()
        defer { condition.unlock() }
        while outstanding > 0 {
            try context.check()
            if let limitDeadline, ContinuousClock.now >= limitDeadline {
                // Answers from other processes not in by their limit get their fallbacks (each
                // answers through `answer`, which takes the lock: run them without it).
                let due = cutOffs
                cutOffs = []
                self.limitDeadline = nil
                condition.unlock()
                for cutOff in due { cutOff() }
                condition.lock()
                continue
            }
            let wake = [context.deadline, limitDeadline].compactMap { $0 }.min()
            if let wake {
                _ = condition.wait(until: Date(timeIntervalSinceNow: max(0, wake.secondsFromNow)))
            } else {
                condition.wait()
            }
        }
        if let firstError { throw .presenterFailed(firstError) }
        return reacquirers
    }

    /// Gives up on the answers still outstanding (after a failure) and returns the reacquirers
    /// received so far, to be given back; reacquirers answered later are given back at once.
    func abandon() -> [Reacquirer] {
        condition.lock()
        defer { condition.unlock() }
        abandoned = true
        defer { reacquirers.removeAll() }
        return reacquirers
    }
}

/// Runs a message on the presenter's own queue — or at once, when the caller is already
/// running on that queue (waiting for a queue we are blocking would never end).
func deliver(to presenter: any FilePresenter, _ message: @escaping @Sendable () -> Void) {
    let queue = presenter.presentedItemOperationQueue
    if OperationQueue.current === queue {
        message()
    } else {
        queue.addOperation(message)
    }
}
