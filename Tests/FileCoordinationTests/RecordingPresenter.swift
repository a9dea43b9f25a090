import Foundation
import Synchronization
import CloudDocuments
@testable import FileCoordination

/// A presenter that records every message it gets, in order, and can be told to refuse.
final class RecordingPresenter: FilePresenter, Sendable {
    private let url: Locked<URL?>
    let presentedItemOperationQueue: OperationQueue
    private let events = Locked<[String]>([])
    let refuseSave = Locked<(any Error)?>(nil)
    let refuseDeletion = Locked<(any Error)?>(nil)
    /// Runs inside `savePresentedItemChanges`, before answering.
    let onSave = Locked<(@Sendable (RecordingPresenter) -> Void)?>(nil)

    init(_ url: URL?) {
        self.url = Locked(url)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    var presentedItemURL: URL? { url.withLock { $0 } }

    /// Every event so far, after the presenter's queue has run what was sent to it.
    var log: [String] {
        presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        return events.withLock { $0 }
    }

    func clear() {
        presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        events.withLock { $0.removeAll() }
    }

    private func record(_ event: String) { events.withLock { $0.append(event) } }

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        record("relinquishToReader")
        reader { [self] in record("reacquireFromReader") }
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        record("relinquishToWriter")
        writer { [self] in record("reacquireFromWriter") }
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        record("save")
        onSave.withLock { $0 }?(self)
        completionHandler(refuseSave.withLock { $0 })
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        record("accommodateDeletion")
        completionHandler(refuseDeletion.withLock { $0 })
    }

    func presentedItemDidMove(to newURL: URL) {
        record("didMove:\(newURL.lastPathComponent)")
        url.withLock { $0 = newURL }
    }

    /// Fired after each `presentedItemDidChange`.
    let changed = Locked<Signal?>(nil)

    /// A presenter of `url` and the signal fired when it is told the item changed.
    static func signallingChanges(_ url: URL) -> (RecordingPresenter, Signal) {
        let presenter = RecordingPresenter(url)
        let signal = Signal()
        presenter.changed.withLock { $0 = signal }
        return (presenter, signal)
    }

    func presentedItemDidChange() {
        record("didChange")
        changed.withLock { $0 }?.fire()
    }
    func presentedSubitemDidAppear(at url: URL) { record("subitemDidAppear:\(url.lastPathComponent)") }
    func presentedSubitemDidChange(at url: URL) { record("subitemDidChange:\(url.lastPathComponent)") }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {
        record("subitemDidMove:\(oldURL.lastPathComponent)->\(newURL.lastPathComponent)")
    }
    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        record("accommodateSubitemDeletion:\(url.lastPathComponent)")
        completionHandler(nil)
    }
}

/// A presenter that implements only the two required properties (all defaults).
final class MinimalPresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()
    init(_ url: URL) { presentedItemURL = url }
}

/// Registers presenters for the duration of a test body, after CloudDocuments' sync-tool rules
/// (as in a process using CloudDocuments: the change monitor's tests use Syncthing's names).
func withPresenters<T>(_ presenters: [any FilePresenter], _ body: () throws -> T) rethrows -> T {
    SyncToolRules.registerWithCoordination()
    presenters.forEach(Coordinator.addFilePresenter)
    defer { presenters.forEach(Coordinator.removeFilePresenter) }
    return try body()
}

struct Refusal: Error, Equatable {}
