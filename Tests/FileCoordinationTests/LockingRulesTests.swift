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
        #expect(readIsBlocked(file))
        #expect(writeIsBlocked(file))
        writer.release()
        #expect(!readIsBlocked(file))
        #expect(!writeIsBlocked(file))
    }

    @Test func aReaderExcludesWritersButNotReaders() throws {
        let scratch = try Scratch()
        let file = scratch.file("r.txt", contents: "x")
        let reader = Holder.reading(file)
        #expect(writeIsBlocked(file))
        #expect(!readIsBlocked(file))
        reader.release()
        #expect(!writeIsBlocked(file))
    }

    @Test func aBlockedWriterRunsAfterTheReaderLeaves() throws {
        let scratch = try Scratch()
        let file = scratch.file("order.txt", contents: "x")
        let events = Box<[String]>([])
        let reader = Holder.reading(file)
        let writerDone = onThread {
            try? Coordinator().coordinate(writingItemAt: file) { _ in events.mutate { $0.append("write") } }
        }
        events.mutate { $0.append("read released") }
        reader.release()
        #expect(writerDone.wait())
        #expect(events.value == ["read released", "write"])
    }

    @Test func anItemThatDoesNotExistYetIsLockedToo() throws {
        let scratch = try Scratch()
        let file = scratch.file("not-yet/created.txt")
        let writer = Holder.writing(file)
        #expect(readIsBlocked(file))
        writer.release()
    }

    @Test func aCoordinatorNeverBlocksItself() throws {
        let scratch = try Scratch()
        let file = scratch.file("self.txt", contents: "x")
        let other = scratch.file("other.txt", contents: "y")
        let coordinator = Coordinator()
        coordinator.timeout = .seconds(5)
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
        #expect(!readIsBlocked(file))
        #expect(writeIsBlocked(file))
        reader.release()
    }

    @Test func samePurposeNeverBlocks() throws {
        let scratch = try Scratch()
        let file = scratch.file("purpose.txt", contents: "x")
        let writer = Holder.writing(file, coordinator: coordinator(purpose: "com.example.sync"))
        #expect(!writeIsBlocked(file, purpose: "com.example.sync"))
        #expect(!readIsBlocked(file, purpose: "com.example.sync"))
        #expect(readIsBlocked(file, purpose: "com.example.other"))
        #expect(readIsBlocked(file))
        writer.release()
    }

    @Test func groupReadersExcludePlainWritersAndShareWithPlainReaders() throws {
        let scratch = try Scratch()
        let file = scratch.file("group.txt", contents: "x")
        let reader = Holder.reading(file, coordinator: coordinator(purpose: "com.example.reader"))
        #expect(writeIsBlocked(file))
        #expect(!readIsBlocked(file))
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
        #expect(writeIsBlocked(directory, options: .forDeleting))
        #expect(writeIsBlocked(directory, options: .forMoving))
        #expect(writeIsBlocked(directory, options: .forReplacing))
        #expect(!writeIsBlocked(directory), "a plain directory write does not wait for items inside")
        reader.release()

        let deleter = Holder.writing(directory, options: .forDeleting)
        #expect(readIsBlocked(inner), "an item whose lock file exists")
        #expect(readIsBlocked(scratch.file("tree/sub/never-coordinated-before.txt")), "an item whose lock file is created now")
        #expect(readIsBlocked(directory))
        #expect(!readIsBlocked(scratch.file("elsewhere.txt")))
        deleter.release()
        #expect(!readIsBlocked(inner))
    }

    @Test func plainDirectoryAccessDoesNotBlockItemsInside() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("plain")
        let inner = scratch.file("plain/a.txt", contents: "x")
        let writer = Holder.writing(directory)
        #expect(!writeIsBlocked(inner))
        writer.release()
        let innerWriter = Holder.writing(inner)
        #expect(!readIsBlocked(directory))
        innerWriter.release()
    }

    @Test func accessInsideAPackageIsAccessToThePackage() throws {
        Coordinator.registerPackageExtension("cdtestpkg")
        let scratch = try Scratch()
        let package = try scratch.directory("Report.cdtestpkg")
        let first = scratch.file("Report.cdtestpkg/Contents/a.txt", contents: "a")
        let second = scratch.file("Report.cdtestpkg/b.txt", contents: "b")
        let writer = Holder.writing(first)
        #expect(readIsBlocked(second))
        #expect(readIsBlocked(package))
        writer.release()
        let reader = Holder.reading(package)
        #expect(writeIsBlocked(second))
        #expect(!readIsBlocked(first))
        reader.release()
        #expect(Coordinator.packageExtensions.contains("cdtestpkg"))
    }

    @Test func timeoutBoundsTheWait() throws {
        let scratch = try Scratch()
        let file = scratch.file("timeout.txt", contents: "x")
        let writer = Holder.writing(file)
        defer { writer.release() }
        let coordinator = impatient(100)
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
            let checked = onThread { blocked.value = error == nil && readIsBlocked(file) }
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
        #expect(!readIsBlocked(file))
    }
}
