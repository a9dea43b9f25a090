import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments
@testable import FileCoordination

/// A coordinated read asks a dirty document to save; the save joins the reader's locks and
/// upgrades them to a write — while another writer already waits for the item. Nobody sets a
/// timeout. The upgrade must get past the waiting writer, the reader must read the saved bytes,
/// and the writer must get in afterwards (issue 6, bug 2).
@Suite("A document saving inside a reader's request while a writer waits", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct DocumentUpgradeTests {
    @Test(arguments: [false, true])
    func theReaderGetsTheSavedBytesAndTheWaitingWriterGetsInAfterwards(writerInAnotherProcess: Bool) async throws {
        try await withOpenNote(containing: "old") { _, url, document in
            document.edit("saved for the reader")
            let gate = ReaderGate(url)
            Coordinator.addFilePresenter(gate)
            defer { Coordinator.removeFilePresenter(gate) }

            let reader = Coordinator()
            let seen = Locked<String?>(nil)
            let readerDone = DispatchSemaphore(value: 0)
            Thread {
                seen.withLock { $0 = (try? reader.coordinate(readingItemAt: url) { text(at: $0) }) ?? "failed" }
                readerDone.signal()
            }.start()
            // The reader holds its read lock and is asking presenters to step aside.
            #expect(try await waitOnThread(gate.asked))

            let writer = Coordinator()
            let writerDone = DispatchSemaphore(value: 0)
            var child: ChildProcess?
            if writerInAnotherProcess {
                child = try ChildProcess(["queue-write", url.path, "the writer's text"])
                #expect(child?.readLine() == "STARTING")
            } else {
                Thread {
                    try? writer.coordinate(writingItemAt: url) { url in try put("the writer's text", at: url) }
                    writerDone.signal()
                }.start()
            }
            #expect(try await onBackgroundThread { waitUntilWriterIsQueued(on: url) })
            gate.proceed.signal()  // now the document is asked to save

            let finished = try await waitOnThread(readerDone)
            #expect(finished, "the reader, the document's save and the waiting writer deadlocked")
            if !finished {
                // Free everyone so the test ends: the waiting writer gives the gate back.
                writer.cancel()
                child?.kill9()
                _ = try await waitOnThread(readerDone)
            }
            #expect(seen.withLock { $0 } == "saved for the reader")
            if let child {
                #expect(child.readLine() == "WROTE")
                child.waitForExit()
            } else {
                #expect(try await waitOnThread(writerDone))
            }
            #expect(text(at: url) == "the writer's text")
        }
    }
}

/// A presenter of the same file whose `relinquishPresentedItem(toReader:)` reports that it was
/// asked and answers only when told to: it holds the reader between taking its lock and asking
/// the document to save.
private final class ReaderGate: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()
    let asked = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)

    init(_ url: URL) { presentedItemURL = url }

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        asked.signal()
        proceed.wait()
        reader(nil)
    }
}

/// Waits (on a thread of its own) for `semaphore`; false only when the hang guard ran out.
private func waitOnThread(_ semaphore: DispatchSemaphore) async throws -> Bool {
    try await onBackgroundThread { semaphore.wait(timeout: Polling.deadline()) == .success }
}

/// Returns once a writer holds the *pending* byte of `url`'s lock file (it waits for the item),
/// checking the kernel's lock table; false only when the hang guard ran out.
private func waitUntilWriterIsQueued(on url: URL) -> Bool {
    guard let directory = try? LockDirectory.current() else { return false }
    let path = LockFileNaming.lockFilePath(for: CanonicalPath.of(url, in: CoordinationRuntime.process.paths), in: directory.path)
    return Polling.holds {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return OFDLock.isContended(.shared, fd: fd, start: LockFileLayout.pending, length: 1)
    }
}
