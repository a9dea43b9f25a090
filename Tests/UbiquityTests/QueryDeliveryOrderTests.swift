import Foundation
import Testing
@testable import Ubiquity

/// How a query hands its events to the operation queue (issue 16, item 7): one operation at a
/// time, never an `Operation` dependency — swift-corelibs-foundation can leave an operation added
/// while its dependency finishes unscheduled until the queue's next scheduling pass, which left a
/// live query's did-update undelivered until the next change.
@Suite struct QueryDeliveryOrderTests {
    @Test("deliveries waiting for the handler's queue are one operation without dependencies, and arrive in order")
    func waitingDeliveriesUseNoDependencies() throws {
        let folder = try Scratch("query-delivery")
        defer { folder.remove() }
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)])
        recorder.queue.isSuspended = true
        for name in ["a.txt", "b.txt", "c.txt"] {
            try folder.write(name, at: name)
            query.settle()
        }
        #expect(query.waitingDeliveriesForTesting == 3)
        let operations = recorder.queue.operations
        #expect(operations.count == 1)
        #expect(operations.allSatisfy { $0.dependencies.isEmpty })
        recorder.queue.isSuspended = false
        #expect(recorder.waitForUpdates { $0.added.count == 3 })
        recorder.drain()
        #expect(recorder.updates.map { $0.added.map(\.name) } == [["a.txt"], ["b.txt"], ["c.txt"]])
        #expect(query.waitingDeliveriesForTesting == 0)
        query.stop()
    }

    @Test("on a concurrent queue the handler is called one event at a time, in order")
    func concurrentQueueKeepsOrder() throws {
        let folder = try Scratch("query-delivery-concurrent")
        defer { folder.remove() }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        let log = EventLog()
        let query = MetadataQuery(scopes: [.folder(folder.url)], notificationBatchingInterval: 0, operationQueue: queue) { log.record($0) }
        try query.start()
        #expect(log.wait { $0.contains(.didFinishGathering) })
        let names = (0..<40).map { "f\($0).txt" }
        for name in names {
            try folder.write(name, at: name)
            query.settle()
        }
        #expect(log.wait { events in events.reduce(0) { if case .didUpdate(let update) = $1 { $0 + update.added.count } else { $0 } } == names.count })
        let added = log.events.flatMap { event -> [String] in
            if case .didUpdate(let update) = event { update.added.map(\.name) } else { [] }
        }
        #expect(added == names)
        #expect(log.overlapped == false)
        query.stop()
    }
}

/// Records events from a handler that may be called on any thread, and notes whether two calls
/// ever overlapped.
private final class EventLog: @unchecked Sendable {
    // @unchecked: every member is guarded by `condition`.
    private let condition = NSCondition()
    private var recorded: [MetadataQueryEvent] = []
    private var inside = 0
    private(set) var overlapped = false

    func record(_ event: MetadataQueryEvent) {
        condition.lock()
        inside += 1
        if inside > 1 { overlapped = true }
        condition.unlock()
        condition.lock()
        inside -= 1
        recorded.append(event)
        condition.broadcast()
        condition.unlock()
    }

    var events: [MetadataQueryEvent] {
        condition.lock(); defer { condition.unlock() }
        return recorded
    }

    /// Waits until `predicate` holds for the events (fail-safe bound: 30 s).
    func wait(_ predicate: ([MetadataQueryEvent]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        condition.lock(); defer { condition.unlock() }
        while !predicate(recorded) { if !condition.wait(until: deadline) { return predicate(recorded) } }
        return true
    }
}
