import Foundation
import Glibc
import Testing
@testable import CloudDocuments
@testable import FileCoordination

/// A coordinated read asks a dirty document to save; the save joins the reader's locks and
/// upgrades them to a write — while another writer already waits for the item. Nobody sets a
/// timeout. The upgrade must get past the waiting writer, the reader must read the saved bytes,
/// and the writer must get in afterwards (issue 6, bug 2).
@Suite("A document saving inside a reader's request while a writer waits", .timeLimit(.minutes(2)))
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
            var child: HelperChild?
            if writerInAnotherProcess {
                child = try HelperChild(["queue-write", url.path, "the writer's text"])
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

/// Waits (on a thread of its own) for `semaphore`, at most 30 s.
private func waitOnThread(_ semaphore: DispatchSemaphore) async throws -> Bool {
    try await onBackgroundThread { semaphore.wait(timeout: .now() + 30) == .success }
}

/// Returns once a writer holds the *pending* byte of `url`'s lock file (it waits for the item),
/// checking the kernel's lock table; false after 30 s.
private func waitUntilWriterIsQueued(on url: URL) -> Bool {
    guard let directory = try? LockDirectory.current() else { return false }
    let path = LockFileNaming.lockFilePath(for: CanonicalPath.of(url), in: directory.path)
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if fd >= 0 {
            let queued = OFDLock.isContended(.shared, fd: fd, start: LockFileLayout.pending, length: 1)
            close(fd)
            if queued { return true }
        }
        usleep(200)
    }
    return false
}

/// The `CoordinationTestHelper` executable in another process, driven through pipes.
private final class HelperChild: @unchecked Sendable {
    // @unchecked: used by the one test that made it.
    private let process = Process()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    init(_ arguments: [String]) throws {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var helper = directory.appendingPathComponent("CoordinationTestHelper")
        if !FileManager.default.isExecutableFile(atPath: helper.path) {
            helper = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("CoordinationTestHelper")
        }
        process.executableURL = helper
        process.arguments = arguments
        process.standardInput = Pipe()
        process.standardOutput = output
        try process.run()
    }

    /// The next line the child prints; nil after 60 s of silence.
    func readLine() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 60_000) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = Glibc.read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func waitForExit() { process.waitUntilExit() }
}
