import Foundation
import Glibc
import SystemSupport
import Testing
import TestSupport
@testable import FileCoordination

/// Presenter messages reaching a presenter in another process (`CoordinationTestHelper
/// remote-present`), through the presence table and the endpoints, with the coordinations made
/// here in a runtime that shares the child's lock directory.
@Suite("Remote presenters: messages across processes", .serialized)
struct RemoteDeliveryTests {
    struct Setup {
        let scratch: Scratch
        let runtime: CoordinationRuntime
        let lockDirectory: String
        let file: URL

        init(contents: String = "old") throws {
            scratch = try Scratch()
            lockDirectory = scratch.url.path + "/locks"
            #expect(mkdir(lockDirectory, 0o700) == 0)
            runtime = CoordinationRuntime(lockDirectoryPath: lockDirectory)
            runtime.remote.isEnabled = true
            runtime.remote.asksForSaves = true
            file = scratch.file("doc.txt", contents: contents)
        }

        func present(_ mode: [String] = []) throws -> ChildProcess {
            var environment = ProcessInfo.processInfo.environment
            environment[LockDirectory.environmentVariable] = lockDirectory
            environment[RemotePresence.environmentVariable] = "1"
            let child = try ChildProcess(["remote-present", file.path] + mode, environment: environment)
            #expect(child.expect("PRESENTING") == "PRESENTING")
            return child
        }

        func coordinator(timeout: Duration? = .seconds(30)) -> Coordinator {
            let coordinator = Coordinator(filePresenter: nil, runtime: runtime)
            coordinator.timeout = timeout
            return coordinator
        }
    }

    @Test("a write asks the presenter in another process to relinquish first, then tells it the item changed, then gives it back")
    func writeRelinquishesThenReportsTheChange() throws {
        let setup = try Setup()
        let child = try setup.present()
        defer { child.closeInput(); child.waitForExit() }
        try setup.coordinator().coordinate(writingItemAt: setup.file) { _ in
            // Printed by the presenter before it answered: the accessor runs after the answer.
            #expect(child.readLine() == "RELINQUISH-WRITER")
        }
        #expect(child.readLine() == "DIDCHANGE")
        #expect(child.readLine() == "REACQUIRE")
        // A presenting process that exits normally gives its slot and its socket back.
        child.closeInput()
        child.waitForExit()
        let table = try #require(PresenceTable.of(directoryPath: setup.lockDirectory))
        #expect(table.slotsInUse & ~table.ownSlots.load(ordering: .relaxed) == 0)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: setup.lockDirectory + "/@peers")) == [])
    }

    @Test("save requests (on by default) make the document in another process save first, and the read gets the saved bytes")
    func readAsksForASaveFirst() throws {
        let setup = try Setup()
        let child = try setup.present(["save-writes", "saved by the other process"])
        defer { child.closeInput(); child.waitForExit() }
        let text = try setup.coordinator().coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "saved by the other process")
        // Asked to save before our read lock is taken (its save takes a lock of its own), then
        // to relinquish once it is held. (Its uncoordinated save may also be reported to it by
        // its own change monitor, at any moment: those lines are left out.)
        var lines: [String] = []
        while lines.count < 3, let line = child.readLine() {
            if line != "DIDCHANGE" { lines.append(line) }
        }
        #expect(lines == ["SAVE", "RELINQUISH-READER", "REACQUIRE"])
    }

    @Test("an error from the presenter in another process vetoes the access, with its domain, code and description")
    func remoteErrorVetoes() throws {
        let setup = try Setup()
        let child = try setup.present(["refuse-save"])
        defer { child.closeInput(); child.waitForExit() }
        let ran = Locked(false)
        do {
            try setup.coordinator().coordinate(readingItemAt: setup.file) { _ in ran.withLock { $0 = true } }
            Issue.record("the read was not refused")
        } catch CoordinationError.presenterFailed(let error) {
            let remote = error as NSError
            #expect(remote.domain == "test.save")
            #expect(remote.code == 3)
            #expect(remote.localizedDescription == "the edits cannot be saved now")
        }
        #expect(!ran.withLock { $0 })
        // The save was asked first, before any lock: refused, nothing was locked or relinquished.
        #expect(child.readLine() == "SAVE")
        try setup.coordinator().coordinate(writingItemAt: setup.file) { _ in }
        #expect(child.readLine() == "RELINQUISH-WRITER", "the next message is the write's, not a reader's relinquishment")
    }

    @Test("with save requests switched off, a read asks the presenter in another process to relinquish, not to save")
    func noSaveRequestWhenSwitchedOff() throws {
        let setup = try Setup()
        setup.runtime.remote.asksForSaves = false
        let child = try setup.present(["refuse-save"])
        defer { child.closeInput(); child.waitForExit() }
        let text = try setup.coordinator().coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "old")
        #expect(child.readLine() == "RELINQUISH-READER")
        #expect(child.readLine() == "REACQUIRE")  // no SAVE in between
    }

    @Test("a process found not to present an item is not asked again until it publishes something new")
    func negativeAnswersAreRemembered() throws {
        let setup = try Setup()
        let first = try setup.present()
        defer { first.closeInput(); first.waitForExit() }
        // Inside the presented file's path: a candidate (its "directory" is presented), but nobody
        // presents the item itself.
        let inside = PathBytes.path(of: setup.file) + "/inside"
        #expect(setup.runtime.remote.mayConcern(inside))
        // The lookup answers the presenter of the "directory" above (ancestors scope), none of the
        // item itself; a path found with nothing at all is remembered (the fast path again).
        let found = try setup.runtime.remote.addresses(at: inside, context: WaitContext(timeout: .seconds(30), token: CancellationToken()))
        #expect(RemoteFound(found, item: inside).item.isEmpty && RemoteFound(found, item: inside).ancestors.count == 1)
        // A second process presenting it is asked.
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let second = try ChildProcess(["remote-present", inside], environment: environment)
        defer { second.closeInput(); second.waitForExit() }
        #expect(second.expect("PRESENTING") == "PRESENTING")
        #expect(setup.runtime.remote.mayConcern(inside))
        #expect(RemoteFound(try setup.runtime.remote.addresses(at: inside, context: WaitContext(timeout: .seconds(30), token: CancellationToken())), item: inside).item.count == 1)
    }

    @Test("a process's answer to a lookup is remembered until it publishes a new presenter: not asked again, then asked")
    func answersAreRememberedUntilANewPresenter() throws {
        let setup = try Setup()
        let child = try setup.present()
        defer { child.closeInput(); child.waitForExit() }
        let path = PathBytes.path(of: setup.file)
        let patient = WaitContext(timeout: .seconds(30), token: CancellationToken())
        #expect(try setup.runtime.remote.addresses(at: path, context: patient).count == 1)
        // Stopped, the process cannot answer anything, and a context whose deadline has passed
        // fails any wait at once: the same answer again proves nothing was asked.
        #expect(child.stopAndWaitUntilStopped())
        let expired = WaitContext(timeout: .zero, token: CancellationToken())
        let remembered = Result { () throws(CoordinationError) in try setup.runtime.remote.addresses(at: path, context: expired) }
        #expect(kill(child.process.processIdentifier, SIGCONT) == 0)
        #expect((try? remembered.get())?.count == 1)
        // A second presenter of the same file in that process is published: asked again, found.
        child.send("add")
        #expect(child.expect("ADDED") == "ADDED")
        #expect(try setup.runtime.remote.addresses(at: path, context: patient).count == 2)
    }

    @Test("switched off, presenters in other processes are not messaged")
    func offByDefault() throws {
        let setup = try Setup()
        setup.runtime.remote.isEnabled = false
        let child = try setup.present()
        defer { child.closeInput(); child.waitForExit() }
        #expect(!setup.runtime.remote.mayConcern(PathBytes.path(of: setup.file)))
        try setup.coordinator().coordinate(writingItemAt: setup.file) { _ in }
        child.closeInput()
        #expect(child.readLine() == "STOPPED")  // nothing was printed before it
    }

    @Test("a presenter process killed with kill -9 is skipped at once; a stopped one costs the timeout")
    func deadAndStoppedPresenterProcesses() throws {
        let setup = try Setup()
        let stopped = try setup.present()
        let pid = stopped.process.processIdentifier
        #expect(stopped.stopAndWaitUntilStopped())
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: CoordinationError.self) {
            try setup.coordinator(timeout: .milliseconds(300)).coordinate(writingItemAt: setup.file) { _ in }
        }
        #expect(clock.now - start >= .milliseconds(300))
        kill(pid, SIGCONT)
        stopped.kill9()

        try setup.coordinator(timeout: nil).coordinate(writingItemAt: setup.file) { _ in }
        // Seen dead at once: not waited out to `answerLimit` (which would count a cut-off).
        #expect(setup.runtime.remote.delivery.cutOffCount == 0)
    }
}
