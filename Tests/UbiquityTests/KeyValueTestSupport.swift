import Foundation
import TestSupport
@testable import Ubiquity

/// Records a store's changes and lets a test wait for them (the wait's deadline only guards
/// against a hang: the changes are awaited, not slept for).
final class ChangeRecorder: @unchecked Sendable {
    // @unchecked: `received` is only touched while `lock` is held.
    private let lock = NSCondition()
    private var received: [KeyValueStoreChange] = []
    private var observation: KeyValueStoreObservation?

    init(_ store: KeyValueStore) {
        observation = store.addChangeObserver { [weak self] change in
            guard let self else { return }
            self.lock.lock()
            self.received.append(change)
            self.lock.broadcast()
            self.lock.unlock()
        }
    }

    var changes: [KeyValueStoreChange] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Waits until `condition` holds for the changes received so far (`seconds` is only a hang
    /// guard); returns them.
    @discardableResult
    func wait(seconds: Double = 60, until condition: ([KeyValueStoreChange]) -> Bool) -> [KeyValueStoreChange] {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while !condition(received) {
            if !lock.wait(until: deadline) { break }
        }
        return received
    }

    /// The keys received with `reason`, in order, without repeats.
    func keys(_ reason: KeyValueStoreChange.Reason) -> [String] {
        var seen: [String] = []
        for change in changes where change.reason == reason {
            for key in change.changedKeys where !seen.contains(key) { seen.append(key) }
        }
        return seen
    }

    func cancel() { observation?.cancel() }
}

/// A `UbiquityTestHelper` process.
func keyValueWorker(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(arguments, helper: "UbiquityTestHelper")
}
