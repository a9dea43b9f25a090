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
    /// A `remote-document` worker of `file`, sharing `setup`'s lock directory, with its document open.
    private static func document(_ file: URL, _ setup: RemoteDeliveryTests.Setup) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        environment.removeValue(forKey: RemotePresence.savesEnvironmentVariable)  // the default: on
        let child = try ChildProcess(["remote-document", file.path], environment: environment)
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
        let clock = ContinuousClock()
        let start = clock.now
        let text = try setup.coordinator(timeout: nil).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "unsaved in the other process")
        #expect(clock.now - start < .seconds(5))
        child.send("state")
        #expect(child.readLine() == "STATE saved")
    }

    @Test("two processes with unsaved documents read each other's file at once, off their main queues: each gets the other's saved edit")
    func mutualReadsOffTheMainQueue() throws {
        let setup = try RemoteDeliveryTests.Setup()
        let other = setup.scratch.file("other.txt", contents: "other old")
        let first = try Self.document(setup.file, setup), second = try Self.document(other, setup)
        defer {
            first.closeInput(); second.closeInput()
            first.waitForExit(); second.waitForExit()
        }
        first.send("edit first edit")
        second.send("edit second edit")
        #expect(first.readLine() == "EDITED")
        #expect(second.readLine() == "EDITED")
        let clock = ContinuousClock()
        let start = clock.now
        first.send("read \(other.path) thread")
        second.send("read \(setup.file.path) thread")
        #expect(first.readLine() == "READ second edit")
        #expect(second.readLine() == "READ first edit")
        #expect(clock.now - start < .seconds(5))
    }

    @Test("two processes with unsaved documents read each other's file at once on their main queues: the wait cycle is broken at once, nobody hangs")
    func mutualReadsOnTheMainQueues() throws {
        let setup = try RemoteDeliveryTests.Setup()
        let other = setup.scratch.file("other.txt", contents: "other old")
        let first = try Self.document(setup.file, setup), second = try Self.document(other, setup)
        defer {
            first.closeInput(); second.closeInput()
            first.waitForExit(); second.waitForExit()
        }
        first.send("edit first edit")
        second.send("edit second edit")
        #expect(first.readLine() == "EDITED")
        #expect(second.readLine() == "EDITED")
        let clock = ContinuousClock()
        let start = clock.now
        // Each main queue blocks in a coordinated read that asks the other's document, which saves
        // on its main queue, to save. Whoever is asked while its main queue waits for the asker
        // answers at once without saving (both may); a request that came before the other's
        // main queue began to wait is saved for once that main queue is free.
        first.send("read \(other.path) main")
        second.send("read \(setup.file.path) main")
        let firstRead = first.readLine(), secondRead = second.readLine()
        #expect(firstRead == "READ second edit" || firstRead == "READ other old")
        #expect(secondRead == "READ first edit" || secondRead == "READ old")
        // Well within the 10 s a save request waits at most without a timeout: the cycle was
        // seen, not waited out.
        #expect(clock.now - start < .seconds(5))
    }
}
