import Foundation
import Synchronization

/// How many messages from other processes may wait on this process's presenter queues at once.
///
/// The endpoint hands each message to a presenter's `presentedItemOperationQueue`, which may be
/// busy or blocked for a long time. Without a bound, a peer of the same user that sends messages
/// in a loop grows those queues without end (memory). Each message takes one unit of the budget
/// when it is handed over and gives it back once its presenter has dealt with it: a request when
/// its answer is sent, a notification when a marker queued right behind it on the same queue
/// runs. With the budget spent, a notification is dropped (the change monitor still reports what
/// really changed on disk) and a request is answered at once with the protocol's default — the
/// asker goes on, as it would after `RemotePresence.answerLimit` — each logged (`RemoteLog`).
///
/// Ordinary editing never comes near `limit`: a presenter has at most a few messages waiting. One
/// budget per endpoint (`RemotePresence.deliveryBudget`: in practice one per process, as only the
/// process runtime publishes its presenters unless a test enables another); every function may be
/// called on any thread.
final class RemoteDeliveryBudget: Sendable {
    /// The budget each `RemotePresence` starts with.
    static let standardLimit = 4096

    let limit: Int
    private let waiting = Atomic<Int>(0)
    /// Dropped messages not yet logged (one line per `logEvery`, so a flood cannot flood stderr).
    private let unlogged = Atomic<Int>(0)
    private static let logEvery = 1024

    init(limit: Int) {
        self.limit = limit
    }

    /// Messages handed to presenters and not yet dealt with.
    var waitingCount: Int { waiting.load(ordering: .relaxed) }

    /// Takes one unit; false (nothing taken) when `limit` are already waiting.
    func take() -> Bool {
        var current = waiting.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = waiting.compareExchange(
                expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Gives back one unit taken by `take`.
    func give() {
        waiting.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Reports a message not handed over because the budget was spent.
    func refused(_ what: String) {
        let count = unlogged.add(1, ordering: .relaxed).newValue
        if count == 1 || count % Self.logEvery == 0 {
            RemoteLog.dropped("\(what): \(limit) messages from other processes already wait on presenter queues (\(count) refused so far)")
        }
    }

    /// Gives the unit back once `queue` has run what was queued on it before this call (a marker
    /// operation behind the message).
    func give(after queue: OperationQueue) {
        queue.addOperation { [self] in give() }
    }
}
