import Foundation
import TestSupport
@testable import Ubiquity

/// Records a query's events in order (its handler runs on `queue`, a serial queue of its own) and
/// lets a test wait until what it expects has arrived. Waiting is on a condition signalled by the
/// handler; the timeout only bounds a failure.
final class QueryRecorder: @unchecked Sendable {
    // @unchecked: `events` is guarded by `condition`.
    let queue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let condition = NSCondition()
    private var events: [MetadataQueryEvent] = []

    func record(_ event: MetadataQueryEvent) {
        condition.lock()
        events.append(event)
        condition.broadcast()
        condition.unlock()
    }

    var all: [MetadataQueryEvent] {
        condition.lock(); defer { condition.unlock() }
        return events
    }

    /// The updates recorded so far, in order.
    var updates: [MetadataQueryUpdate] {
        all.compactMap { if case .didUpdate(let update) = $0 { update } else { nil } }
    }

    /// Every update merged: what was added, changed and removed, in order of arrival.
    var merged: MetadataQueryUpdate {
        updates.reduce(into: MetadataQueryUpdate()) { total, update in
            total.added += update.added; total.changed += update.changed; total.removed += update.removed
        }
    }

    /// Waits until `condition` holds for the recorded events (true) or 30 s pass (false).
    @discardableResult
    func wait(until predicate: ([MetadataQueryEvent]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        condition.lock(); defer { condition.unlock() }
        while !predicate(events) {
            if !condition.wait(until: deadline) { return predicate(events) }
        }
        return true
    }

    func waitUntilGathered() -> Bool {
        wait { $0.contains(.didFinishGathering) }
    }

    struct NotGathered: Error {}

    /// Starts a query whose events this recorder records (batching off unless told), and returns
    /// it once it has gathered.
    func startQuery(_ scopes: [MetadataQueryScope], predicate: MetadataItemPredicate = .all,
                    sortKeys: [MetadataQuerySortKey] = [], batching: TimeInterval = 0,
                    account: UbiquityAccount? = nil, removalHold: Duration? = nil) throws -> MetadataQuery {
        // The shared account reads its environment once: the fixture must set it up first.
        let account = account ?? { SharedUbiquityFixture.setUp(); return UbiquityAccount.shared }()
        let query = MetadataQuery(scopes: scopes, predicate: predicate, sortKeys: sortKeys, notificationBatchingInterval: batching,
                                  operationQueue: queue, account: account) { [self] in record($0) }
        if let removalHold { query.setRemovalHoldForTesting(removalHold) }
        try query.start()
        guard waitUntilGathered() else { throw NotGathered() }
        return query
    }

    /// Waits until the merged updates satisfy `predicate`.
    @discardableResult
    func waitForUpdates(_ predicate: @escaping (MetadataQueryUpdate) -> Bool) -> Bool {
        wait { events in
            let merged = events.reduce(into: MetadataQueryUpdate()) { total, event in
                if case .didUpdate(let update) = event {
                    total.added += update.added; total.changed += update.changed; total.removed += update.removed
                }
            }
            return predicate(merged)
        }
    }

    /// Returns once every delivery queued so far has been handled.
    func drain() {
        queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    }
}

extension Scratch {
    /// Writes `text` at `relative` in one step (written beside under a hidden name, then renamed),
    /// so a query sees it appear once, complete.
    @discardableResult
    func write(_ text: String, at relative: String) throws -> URL {
        let target = url.appending(path: relative)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let hidden = target.deletingLastPathComponent().appending(path: ".\(target.lastPathComponent).writing")
        try Data(text.utf8).write(to: hidden)
        guard rename(hidden.path, target.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
        return target
    }
}

extension MetadataQuery {
    /// Returns once the query has applied every change made before the call and queued what it
    /// delivers for them: the first hold is entered in the loop turn that then reads the kernel's
    /// reports at hand, the second only once that turn is over.
    func settle() {
        for _ in 0..<2 { holdForTesting()?.signal() }
    }
}
