import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// Save requests to a CloudDocument open in another process (`CoordinationTestHelper
/// remote-document`), on by default: a read here gets the other process's unsaved edit, and two
/// processes reading each other's documents at once never hang (Docs/RemotePresenters.md, *Save
/// requests and wait cycles*). Every read here and in the workers has no timeout.
@Suite("Remote presenters: documents in other processes asked to save", .serialized)
struct RemoteDocumentSaveTests {
    /// A `remote-document` worker of `file`, sharing `setup`'s lock directory, with its document
    /// open; its standard error goes to `errors` when given.
    private static func document(_ file: URL, _ setup: RemoteDeliveryTests.Setup, errors: URL? = nil) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        environment.removeValue(forKey: RemotePresence.savesEnvironmentVariable)  // the default: on
        let child = try ChildProcess(["remote-document", file.path], environment: environment, standardError: errors)
        #expect(child.expect("OPENED")?.hasPrefix("OPENED") == true)
        return child
    }

    @Test("a document with unsaved changes in another process saves them for our read, which gets the saved bytes")
    func dirtyDocumentSavesForOurRead() throws {
        let setup = try RemoteDeliveryTests.Setup()
        let child = try Self.document(setup.file, setup)
        defer { child.closeInput(); child.waitForExit() }
        child.send("edit unsaved in the other process")
        #expect(child.readLine() == "EDITED")
        #expect(try String(contentsOf: setup.file, encoding: .utf8) == "old")
        let text = try setup.coordinator(timeout: nil).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "unsaved in the other process")
        #expect(setup.runtime.remote.delivery.cutOffCount == 0)  // answered, not waited out
        child.send("state")
        #expect(child.readLine() == "STATE saved")
    }

    /// The clean mark (Docs/RemotePresenters.md, *The clean mark*): a process whose document has
    /// no unsaved changes carries it, so readers here skip asking it to save; an edit clears it
    /// before the edit can be seen, and the save our read asks for sets it again.
    @Test("a process whose document has no unsaved changes carries the clean mark; an edit clears it, the save sets it again")
    func cleanMarkFollowsTheDocument() throws {
        let setup = try RemoteDeliveryTests.Setup()
        let child = try Self.document(setup.file, setup)
        defer { child.closeInput(); child.waitForExit() }
        let table = try #require(setup.runtime.remote.table())
        let pid = child.process.processIdentifier
        let slot = try #require(table.slot(ofProcess: pid))
        #expect(table.isKnownClean(slot: slot, process: pid))
        #expect(!table.isKnownClean(slot: slot, process: pid + 1), "the mark names its process")
        child.send("edit unsaved in the other process")
        #expect(child.readLine() == "EDITED")
        #expect(!table.isKnownClean(slot: slot, process: pid))
        let text = try setup.coordinator(timeout: nil).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "unsaved in the other process")
        child.send("state")
        #expect(child.readLine() == "STATE saved")
        #expect(table.isKnownClean(slot: slot, process: pid))
        // Clean, it is not asked: the read gets what is on disk, with no answer awaited.
        let again = try setup.coordinator(timeout: nil).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(again == "unsaved in the other process")
    }

    /// Two `remote-document` workers, of `doc.txt` ("old") and `other.txt` ("other old"), each
    /// with an unsaved edit ("first edit", "second edit"), asked at once to read each other's file
    /// `where` ("thread" or "main", with no timeout); returns what each read, and the lines of both
    /// workers' standard error that report a save request waited out to its limit (the library logs
    /// "… did not answer … within N ms" for each).
    private static func mutualReads(_ place: String) throws -> (first: String?, second: String?, cutOffs: [String]) {
        let setup = try RemoteDeliveryTests.Setup()
        let other = setup.scratch.file("other.txt", contents: "other old")
        let errors = [setup.scratch.file("first.stderr"), setup.scratch.file("second.stderr")]
        let first = try document(setup.file, setup, errors: errors[0]), second = try document(other, setup, errors: errors[1])
        defer {
            first.closeInput(); second.closeInput()
            first.waitForExit(); second.waitForExit()
        }
        first.send("edit first edit")
        second.send("edit second edit")
        #expect(first.readLine() == "EDITED")
        #expect(second.readLine() == "EDITED")
        first.send("read \(other.path) \(place)")
        second.send("read \(setup.file.path) \(place)")
        let firstRead = first.readLine(), secondRead = second.readLine()
        // A cut-off is logged before the read it ended returns, so before the lines above.
        let cutOffs = errors.flatMap { url in
            ((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
                .filter { $0.contains("did not answer") }
        }
        return (firstRead, secondRead, cutOffs)
    }

    @Test("two processes with unsaved documents read each other's file at once, off their main queues: each gets the other's saved edit")
    func mutualReadsOffTheMainQueue() throws {
        let reads = try Self.mutualReads("thread")
        #expect(reads.first == "READ second edit")
        #expect(reads.second == "READ first edit")
        #expect(reads.cutOffs.isEmpty, "answered, not waited out: \(reads.cutOffs)")
    }

    @Test("two processes with unsaved documents read each other's file at once on their main queues: the wait cycle is broken at once, nobody hangs")
    func mutualReadsOnTheMainQueues() throws {
        // Each main queue blocks in a coordinated read that asks the other's document, which saves
        // on its main queue, to save. Whoever is asked while its main queue waits for the asker
        // answers at once without saving (both may); a request that came before the other's
        // main queue began to wait is saved for once that main queue is free.
        let reads = try Self.mutualReads("main")
        #expect(reads.first == "READ second edit" || reads.first == "READ other old")
        #expect(reads.second == "READ first edit" || reads.second == "READ old")
        // The cycle was seen, not waited out to the 10 s a save request waits at most.
        #expect(reads.cutOffs.isEmpty, "waited out instead of seen: \(reads.cutOffs)")
    }

    @Test("without a timeout, a document whose main queue is blocked by something else costs our read saveAnswerLimit, not a hang; it saves later")
    func blockedMainQueueCostsTheSaveLimit() throws {
        let setup = try RemoteDeliveryTests.Setup()
        setup.runtime.remote.answerLimit = .milliseconds(500)
        let child = try Self.document(setup.file, setup)
        defer { child.closeInput(); child.waitForExit() }
        child.send("edit saved late")
        #expect(child.readLine() == "EDITED")
        child.send("block-main")
        #expect(child.readLine() == "BLOCKED")
        let clock = ContinuousClock()
        let start = clock.now
        let text = try setup.coordinator(timeout: nil).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "old")
        #expect(clock.now - start >= .milliseconds(500))  // never before the limit
        #expect(setup.runtime.remote.delivery.cutOffCount >= 1)  // the limit, not a hang, ended it
        child.send("unblock-main")
        #expect(child.readLine() == "UNBLOCKED")
        // The save asked for still happens once the main queue is free (its answer is dropped).
        child.closeInput()
        #expect(child.expect("CLOSED") == "CLOSED")
        #expect(try String(contentsOf: setup.file, encoding: .utf8) == "saved late")
    }

    @Test("a stopped document process costs our read its timeout, and saves for the next read once resumed; one killed while asked to save is skipped at once")
    func stoppedAndKilledDocuments() throws {
        let setup = try RemoteDeliveryTests.Setup()
        setup.runtime.remote.answerLimit = .seconds(60)  // only the kill may end the last read
        let child = try Self.document(setup.file, setup)
        child.send("edit edited")
        #expect(child.readLine() == "EDITED")
        #expect(child.stopAndWaitUntilStopped())
        let clock = ContinuousClock()
        let start = clock.now
        do {
            try setup.coordinator(timeout: .milliseconds(300)).coordinate(readingItemAt: setup.file) { _ in }
            Issue.record("the read did not time out")
        } catch CoordinationError.timedOut {}
        #expect(clock.now - start >= .milliseconds(300))  // never before its timeout
        kill(child.process.processIdentifier, SIGCONT)
        let resumed = try setup.coordinator(timeout: Polling.hangGuard).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(resumed == "edited")

        // Killed while its main queue is blocked and our read waits for its save answer.
        child.send("report-saves")
        #expect(child.readLine() == "REPORTING")
        child.send("edit edited again")
        child.send("block-main")
        var sawEdit = false, sawBlock = false
        while !(sawEdit && sawBlock), let line = child.readLine() {
            if line == "EDITED" { sawEdit = true }
            if line == "BLOCKED" { sawBlock = true }
        }
        let reader = DispatchSemaphore(value: 0)
        let result = Locked<Result<String, any Error>?>(nil)
        let coordinator = setup.coordinator(timeout: nil)
        let file = setup.file
        Thread {
            result.withLock { $0 = Result { try coordinator.coordinate(readingItemAt: file) { try String(contentsOf: $0, encoding: .utf8) } } }
            reader.signal()
        }.start()
        #expect(child.expect("SAVE-ASKED") == "SAVE-ASKED")
        child.kill9()
        // The answer limit is 60 s here, and the read was not waited out (no cut-off): it ended
        // because the kill was seen.
        #expect(reader.wait(timeout: .now() + 120) == .success)
        #expect(try result.withLock { $0 }?.get() == "edited")
        #expect(setup.runtime.remote.delivery.cutOffCount == 0)
    }
}
