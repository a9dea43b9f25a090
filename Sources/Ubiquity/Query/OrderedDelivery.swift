import Foundation
import FileCoordination

/// Runs a query's deliveries on its `OperationQueue` one at a time and in the order submitted,
/// even on a concurrent queue, without `Operation` dependencies: one operation is queued at a
/// time, and it queues the next when it is done.
///
/// Why not a dependency on the previous delivery's operation: swift-corelibs-foundation loses the
/// wake-up of an operation added while its dependency is finishing (`_addOperations` stores a
/// stale `isReady` over the one the finishing dependency set; the operation then waits for the
/// queue's next scheduling pass — in a live query, the next change). A standalone loop adding an
/// operation that depends on one just finishing showed it once in about 320,000 tries; under load
/// it left a live query's did-update undelivered until the next change (issue 16, item 7).
final class OrderedDelivery: Sendable {
    typealias Job = @Sendable () -> Void

    private struct Pending {
        /// Jobs not run yet from `head` on; a slot is emptied when its job is taken, so a job
        /// (and the results it delivers) is not kept alive once run.
        var jobs: [Job?] = []
        var head = 0
        /// Whether an operation is queued or running (it runs one job, then queues the next).
        var scheduled = false

        var count: Int { jobs.count - head }

        mutating func popFirst() -> Job? {
            guard head < jobs.count else { return nil }
            defer {
                jobs[head] = nil
                head += 1
                if head == jobs.count { jobs.removeAll(); head = 0 }
                else if head >= 64, head * 2 >= jobs.count { jobs.removeFirst(head); head = 0 }
            }
            return jobs[head]
        }
    }
    private let pending = Locked(Pending())
    private let queue: OperationQueue

    /// Deliveries on `queue`.
    init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Runs `job` on the queue after every job submitted before it has run. Any thread.
    func submit(_ job: @escaping Job) {
        let start = pending.withLock { pending -> Bool in
            pending.jobs.append(job)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if start { scheduleNext() }
    }

    /// Jobs submitted and not run yet.
    var waitingCount: Int { pending.withLock { $0.count } }

    private func scheduleNext() {
        queue.addOperation(BlockOperation { [self] in runOne() })
    }

    /// On the queue: runs the oldest job, then queues an operation for the next one, if any.
    private func runOne() {
        let job = pending.withLock { pending -> Job? in
            let job = pending.popFirst()
            if job == nil { pending.scheduled = false }
            return job
        }
        guard let job else { return }
        job()
        let more = pending.withLock { pending -> Bool in
            if pending.count == 0 { pending.scheduled = false }
            return pending.scheduled
        }
        if more { scheduleNext() }
    }
}
