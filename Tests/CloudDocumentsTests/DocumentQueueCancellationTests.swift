import Foundation
import Testing
@testable import CloudDocuments

/// `presentedItemOperationQueue` is public, so an app may cancel its operations at any time. The
/// document's own work must survive it (issue 6, bug 6: it crashed on a force unwrap when the hop
/// of a save was cancelled). Since the hooks run on the main actor, saves and announcements do not
/// use that queue at all: they complete while it is held and cancelled.
@Suite("Cancelling the document queue's operations")
struct DocumentQueueCancellationTests {
    /// Holds the document queue with an operation of the app's own until `release()`.
    final class QueueBlocker: Sendable {
        let started = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)

        init(_ queue: OperationQueue) {
            queue.addOperation { [self] in
                started.signal()
                released.wait()
            }
        }

        func waitUntilStarted() async throws { try await onBackgroundThread { self.started.wait() } }
        func release() { released.signal() }
    }

    /// Waits until `queue` holds at least `count` operations (the running one included).
    func waitForOperations(_ count: Int, on queue: OperationQueue) async throws {
        try await Polling.until("\(count) operations on the presenter queue", interval: .milliseconds(1)) {
            queue.operationCount >= count
        }
    }

    @Test("a save while the presenter queue is held and cancelled: it completes, the document stays normal")
    func cancelDuringSave() async throws {
        try await withOpenNote(containing: "original") { _, url, document in
            let recorder = StateRecorder(document)
            document.replaceText("edited")
            let queue = document.presentedItemOperationQueue
            let blocker = QueueBlocker(queue)
            try await blocker.waitUntilStarted()

            queue.cancelAllOperations()
            // Nothing of the save waits for the presenter queue.
            try await document.saveThrowing(to: url, for: .forOverwriting)
            blocker.release()
            #expect(text(at: url) == "edited")
            #expect(document.documentState == .normal)
            #expect(!document.hasUnsavedChanges)
            #expect(document.calls("contents") == 1)

            // The document still works: another edit, save and close.
            document.replaceText("again")
            try await document.closeThrowing()
            #expect(text(at: url) == "again")
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [.closed])
        }
    }

    @Test("cancelAllOperations while a presenter message waits: the other coordinator's write still gets through")
    func cancelPendingPresenterMessage() async throws {
        try await withOpenNote(containing: "original") { _, url, document in
            let queue = document.presentedItemOperationQueue
            let blocker = QueueBlocker(queue)
            try await blocker.waitUntilStarted()
            // The writer asks the document to relinquish the file; the message queues up behind
            // the blocker. Cancelled, it would never be answered: the hang guard makes that a
            // failure instead of a hang.
            let write = Task {
                try await onBackgroundThread {
                    let coordinator = Coordinator()
                    coordinator.timeout = Polling.hangGuard
                    try coordinator.coordinate(writingItemAt: url) { url in try put("written", at: url) }
                }
            }
            try await waitForOperations(2, on: queue)
            queue.cancelAllOperations()
            blocker.release()
            try await write.value
            #expect(text(at: url) == "written")
            try await document.closeThrowing()
            #expect(document.documentState == .closed)
        }
    }

    @Test("cancelAllOperations cancels the Operation objects the app added, and only those")
    func appOperationsAreCancelled() async throws {
        try await withOpenNote(containing: "original") { _, _, document in
            let queue = document.presentedItemOperationQueue
            let blocker = QueueBlocker(queue)
            try await blocker.waitUntilStarted()
            let ran = Locked<[String]>([])
            queue.addOperation(BlockOperation { ran.withLock { $0.append("operation") } })
            queue.addOperation { ran.withLock { $0.append("block") } }
            queue.cancelAllOperations()
            blocker.release()
            await drainDocumentQueue(document)
            #expect(ran.withLock { $0 } == ["block"])
            try await document.closeThrowing()
        }
    }

    @Test("a failing save while the presenter queue is held and cancelled: the state change is still announced, in order")
    func cancelPendingAnnouncement() async throws {
        try await withOpenNote(containing: "original") { _, url, document in
            let queue = document.presentedItemOperationQueue
            var stream = StateStream(document)
            let blocker = QueueBlocker(queue)
            try await blocker.waitUntilStarted()

            // A failing save makes the state gain savingError; it is announced on the main actor,
            // not behind the blocker.
            document.replaceText("edited")
            SafeSave.injectFailure(at: .write, errno: EIO, forTarget: url)
            queue.cancelAllOperations()
            await #expect(throws: DocumentError.self) { try await document.saveThrowing(to: url, for: .forOverwriting) }
            blocker.release()
            #expect(document.documentState == .savingError)

            // The failure was announced although cancelAllOperations ran meanwhile; so is the
            // recovery.
            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(await stream.next(2) == [.savingError, .normal])
            #expect(text(at: url) == "edited")
            try await document.closeThrowing()
        }
    }
}
