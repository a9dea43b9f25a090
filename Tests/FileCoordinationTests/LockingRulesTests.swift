import Foundation
import Testing
@testable import FileCoordination

@Suite("Locking rules, in one process")
struct LockingRulesTests {
    @Test func readersShareAnItem() throws {
        let scratch = try Scratch()
        let file = scratch.file("shared.txt", contents: "x")
        let reader = Holder.reading(file)
        defer { reader.release() }
        let read = try Coordinator().coordinate(readingItemAt: file) { try String(contentsOf: $0, encoding: .utf8) }
        #expect(read == "x")
    }

    @Test func aWriterExcludesReadersAndWriters() throws {
        let scratch = try Scratch()
        let file = scratch.file("w.txt", contents: "x")
        let writer = Holder.writing(file)
        #expect(readWaits(file))
        #expect(writeWaits(file))
        writer.release()
        #expect(readGetsIn(file))
        #expect(writeGetsIn(file))
    }

    @Test func aReaderExcludesWritersButNotReaders() throws {
        let scratch = try Scratch()
        let file = scratch.file("r.txt", contents: "x")
        let reader = Holder.reading(file)
        #expect(writeWaits(file))
        #expect(readGetsIn(file))
        reader.release()
        #expect(writeGetsIn(file))
    }

    @Test func aBlockedWriterRunsAfterTheReaderLeaves() throws {
        let scratch = try Scratch()
        let file = scratch.file("order.txt", contents: "x")
        let events = Box<[String]>([])
        let reader = Holder.reading(file)
        let writerDone = onThread {
            try? Coordinator().coordinate(writingItemAt: file) { _ in events.mutate { $0.append("write") } }
        }
        // The writer has queued (it holds the pending gate) before the reader leaves.
        try Polling.blockUntil("the writer to queue for \(file.lastPathComponent)") { LockProbe.writerIsWaiting(file) }
        #expect(events.value.isEmpty, "the writer ran while the reader held the item")
        events.mutate { $0.append("read released") }
        reader.release()
        #expect(writerDone.wait())
        #expect(events.value == ["read released", "write"])
    }

    @Test func anItemThatDoesNotExistYetIsLockedToo() throws {
        let scratch = try Scratch()
        let file = scratch.file("not-yet/created.txt")
        let writer = Holder.writing(file)
        #expect(readWaits(file))
        writer.release()
    }

    @Test func aCoordinatorNeverBlocksItself() throws {
        let scratch = try Scratch()
        let file = scratch.file("self.txt", contents: "x")
        let other = scratch.file("other.txt", contents: "y")
        let coordinator = patient()   // a hang guard only: a coordinator that blocked itself would hang
        let result = try coordinator.coordinate(readingItemAt: file) { _ in
            try coordinator.coordinate(writingItemAt: file) { url in
                try "nested".write(to: url, atomically: false, encoding: .utf8)
                return try coordinator.coordinate(readingItemAt: url) { try String(contentsOf: $0, encoding: .utf8) }
            }
        }
        #expect(result == "nested")
        // Several intents of one call on the same item.
        try coordinator.coordinate(readingItemAt: file, writingItemAt: file) { _, _ in }
        try coordinator.coordinate(writingItemAt: file, writingItemAt: other) { _, _ in }
        // After the nested write ended, the outer read is a read again: others may read.
        let reader = Holder.reading(file, coordinator: coordinator)
        #expect(readGetsIn(file))
        #expect(writeWaits(file))
        reader.release()
    }

    @Test func samePurposeNeverBlocks() throws {
        let scratch = try Scratch()
        let file = scratch.file("purpose.txt", contents: "x")
        let writer = Holder.writing(file, coordinator: coordinator(purpose: "com.example.sync"))
        #expect(writeGetsIn(file, purpose: "com.example.sync"))
        #expect(readGetsIn(file, purpose: "com.example.sync"))
        #expect(readWaits(file, purpose: "com.example.other"))
        #expect(readWaits(file))
        writer.release()
    }

    @Test func groupReadersExcludePlainWritersAndShareWithPlainReaders() throws {
        let scratch = try Scratch()
        let file = scratch.file("group.txt", contents: "x")
        let reader = Holder.reading(file, coordinator: coordinator(purpose: "com.example.reader"))
        #expect(writeWaits(file))
        #expect(readGetsIn(file))
        reader.release()
    }

    @Test func aNestedConflictThroughAnotherCoordinatorFailsAtOnce() throws {
        let scratch = try Scratch()
        let file = scratch.file("deadlock.txt", contents: "x")
        let outer = Coordinator()
        // Refused with wouldDeadlock, not by timing out (that would be `timedOut`).
        let deadlocked = try outer.coordinate(writingItemAt: file) { _ in
            fails(with: "wouldDeadlock") { try Coordinator().coordinate(readingItemAt: file) { _ in } }
        }
        #expect(deadlocked)
        // Reading inside a read through another coordinator is fine.
        try outer.coordinate(readingItemAt: file) { _ in
            try Coordinator().coordinate(readingItemAt: file) { _ in }
        }
    }

    @Test func aDirectoryDeleteWaitsForAndExcludesEverythingInside() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("tree")
        let inner = scratch.file("tree/sub/inner.txt", contents: "x")
        let reader = Holder.reading(inner)
        #expect(writeWaits(directory, options: .forDeleting))
        #expect(writeWaits(directory, options: .forMoving))
        #expect(writeWaits(directory, options: .forReplacing))
        #expect(writeGetsIn(directory), "a plain directory write does not wait for items inside")
        reader.release()

        let deleter = Holder.writing(directory, options: .forDeleting)
        #expect(readWaits(inner), "an item whose lock file exists")
        #expect(readWaits(scratch.file("tree/sub/never-coordinated-before.txt")), "an item whose lock file is created now")
        #expect(readWaits(directory))
        #expect(readGetsIn(scratch.file("elsewhere.txt")))
        deleter.release()
        #expect(readGetsIn(inner))
    }

    /// The destination of a folder move is usually missing: an accessor still holding a path
    /// inside it (a document saving where its file was before an earlier move of that folder)
    /// must finish before a folder lands there — else the next move out of it finds that lock
    /// file replaced and moves the folder away mid-save (seen in the soak).
    @Test func aMissingFolderIsDeletedMovedOrReplacedOnlyAfterTheAccessesInsideIt() throws {
        let scratch = try Scratch()
        let missing = scratch.url.appendingPathComponent("gone", isDirectory: true)
        let inner = scratch.file("gone/doc.txt")
        let writer = Holder.writing(inner)
        #expect(writeWaits(missing, options: .forReplacing))
        #expect(writeWaits(missing, options: .forMoving))
        #expect(writeWaits(missing, options: .forDeleting))
        #expect(writeGetsIn(missing), "a plain write of the missing folder does not wait for items inside")
        writer.release()
        #expect(writeGetsIn(missing, options: .forReplacing))
        // A missing file is locked with nothing inside it to wait for, as before.
        #expect(writeGetsIn(scratch.file("gone-file.txt"), options: .forReplacing))
    }

    @Test func plainDirectoryAccessDoesNotBlockItemsInside() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("plain")
        let inner = scratch.file("plain/a.txt", contents: "x")
        let writer = Holder.writing(directory)
        #expect(writeGetsIn(inner))
        writer.release()
        let innerWriter = Holder.writing(inner)
        #expect(readGetsIn(directory))
        innerWriter.release()
    }

    @Test func accessInsideAPackageIsAccessToThePackage() throws {
        Coordinator.registerPackageExtension("cdtestpkg")
        let scratch = try Scratch()
        let package = try scratch.directory("Report.cdtestpkg")
        let first = scratch.file("Report.cdtestpkg/Contents/a.txt", contents: "a")
        let second = scratch.file("Report.cdtestpkg/b.txt", contents: "b")
        let writer = Holder.writing(first)
        #expect(readWaits(second))
        #expect(readWaits(package))
        writer.release()
        let reader = Holder.reading(package)
        #expect(writeWaits(second))
        #expect(readGetsIn(first))
        reader.release()
        #expect(Coordinator.packageExtensions.contains("cdtestpkg"))
    }

    @Test func timeoutBoundsTheWait() throws {
        let scratch = try Scratch()
        let file = scratch.file("timeout.txt", contents: "x")
        let writer = Holder.writing(file)
        defer { writer.release() }
        let coordinator = Coordinator()
        coordinator.timeout = .milliseconds(100)
        let start = ContinuousClock.now
        var ran = false
        #expect(fails(with: "timedOut") { try coordinator.coordinate(readingItemAt: file) { _ in ran = true } })
        #expect(!ran)
        #expect(ContinuousClock.now - start >= .milliseconds(100))   // never before its timeout
    }

    @Test func cancelEndsCurrentAndLaterWaits() throws {
        let scratch = try Scratch()
        let file = scratch.file("cancel.txt", contents: "x")
        let writer = Holder.writing(file)
        let coordinator = Coordinator()
        let outcome = Box<String>("")
        let waiting = onThread {
            do {
                try coordinator.coordinate(readingItemAt: file) { _ in }
                outcome.value = "ran"
            } catch let error as CoordinationError {
                outcome.value = caseName(error)
            } catch {
                outcome.value = "\(error)"
            }
        }
        try Polling.blockUntil("the reader to wait for \(file.lastPathComponent)") { KernelLockProbe.someoneWaits(for: file) }
        coordinator.cancel()
        #expect(waiting.wait())
        #expect(outcome.value == "cancelled")
        writer.release()
        #expect(fails(with: "cancelled") { try coordinator.coordinate(readingItemAt: file) { _ in } })
    }

    @Test func taskCancellationEndsAnAsyncWait() async throws {
        let scratch = try Scratch()
        let file = scratch.file("task.txt", contents: "x")
        let writer = Holder.writing(file)
        let task = Task {
            try await Coordinator().coordinate(with: [.readingIntent(with: file)]) { _ in "ran" }
        }
        task.cancel()
        await #expect(throws: CoordinationError.self) { _ = try await task.value }
        writer.release()
    }

    @Test func asyncVariantsRunTheAccessorWithTheLocksHeld() async throws {
        let scratch = try Scratch()
        let file = scratch.file("async.txt", contents: "hello")
        let text = try await Coordinator().coordinate(with: [.readingIntent(with: file), .writingIntent(with: scratch.file("out.txt"))]) { intents in
            try String(contentsOf: intents[0].url, encoding: .utf8)
        }
        #expect(text == "hello")

        let queue = OperationQueue()
        let done = Signal()
        let blocked = Box<Bool>(false)
        Coordinator().coordinate(with: [.writingIntent(with: file)], queue: queue) { error in
            // Checked from another thread: on this one a conflicting read would be refused as a deadlock.
            let checked = onThread { blocked.value = error == nil && readWaits(file) }
            _ = checked.wait()
            done.fire()
        }
        #expect(done.wait())
        #expect(blocked.value, "the write lock is held while the queue accessor runs")
    }

    @Test func invalidRequestsAreRefused() throws {
        let scratch = try Scratch()
        let file = scratch.file("bad.txt", contents: "x")
        #expect(fails(with: "invalidRequest") {
            try Coordinator().coordinate(writingItemAt: file, options: [.forDeleting, .forMerging]) { _ in }
        })
        #expect(fails(with: "invalidRequest") {
            try Coordinator().coordinate(readingItemAt: URL(string: "https://example.com/x")!) { _ in }
        })
    }

    @Test func accessorErrorsPassThroughAndReleaseTheLocks() throws {
        struct Oops: Error {}
        let scratch = try Scratch()
        let file = scratch.file("throws.txt", contents: "x")
        #expect(throws: Oops.self) { try Coordinator().coordinate(writingItemAt: file) { _ in throw Oops() } }
        #expect(readGetsIn(file))
    }
}
