import FileCoordination
import Foundation
@testable import CloudDocuments

/// A presenter of one item that records the version messages, changes and new subitems it gets, in
/// arrival order ("gain <id>", "lose <id>", "resolve <id>", "change", "appear <name>"), and whether
/// each arrived on its own queue.
final class VersionMessageRecorder: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let messages = Locked<[String]>([])
    let onOwnQueue = Locked(true)
    let arrived = DispatchSemaphore(value: 0)

    /// Whether changes and new subitems are recorded too (not only version messages).
    let includingChanges: Bool

    init(_ url: URL, includingChanges: Bool = true) {
        presentedItemURL = url
        self.includingChanges = includingChanges
        presentedItemOperationQueue = OperationQueue()
        presentedItemOperationQueue.maxConcurrentOperationCount = 1
    }

    private func record(_ message: String) {
        let current = OperationQueue.current === presentedItemOperationQueue
        onOwnQueue.withLock { $0 = $0 && current }
        messages.withLock { $0.append(message) }
        arrived.signal()
    }

    func presentedItemDidGain(_ version: FileVersionReference) { record("gain \(version.persistentIdentifier)") }
    func presentedItemDidLose(_ version: FileVersionReference) { record("lose \(version.persistentIdentifier)") }
    func presentedItemDidResolveConflict(_ version: FileVersionReference) { record("resolve \(version.persistentIdentifier)") }
    func presentedSubitemDidAppear(at url: URL) {
        if includingChanges { record("appear \(url.lastPathComponent)") }
    }
    /// "change" while the item is there, "change (missing)" when it is not.
    func presentedItemDidChange() {
        guard includingChanges else { return }
        let exists = presentedItemURL.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
        record(exists ? "change" : "change (missing)")
    }

    /// Waits until `predicate` holds for the messages; false only when the hang guard runs out.
    func wait(until predicate: @escaping @Sendable ([String]) -> Bool) async throws -> Bool {
        let arrived = self.arrived, messages = self.messages
        return try await onBackgroundThread {
            while !predicate(messages.withLock { $0 }) {
                if arrived.wait(timeout: Polling.deadline()) == .timedOut { return false }
            }
            return true
        }
    }

    /// Waits for `count` more messages; false only when the hang guard runs out.
    func wait(for count: Int) async throws -> Bool {
        let arrived = self.arrived
        return try await onBackgroundThread {
            (0..<count).allSatisfy { _ in arrived.wait(timeout: Polling.deadline()) == .success }
        }
    }
}
