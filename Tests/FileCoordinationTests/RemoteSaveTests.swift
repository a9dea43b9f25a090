import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// Lock borrowing across processes: a presenter in another process asked to save by our read
/// saves through its own coordinator, joining our read lock (lent as `SCM_RIGHTS` descriptors)
/// instead of waiting for it (Docs/RemotePresenters.md §3).
@Suite("Remote presenters: saves that borrow the asker's locks", .serialized)
struct RemoteSaveTests {
    @Test("a presenter in another process that saves through a coordinator does so during our read, and the read gets its bytes")
    func coordinatedSaveJoinsTheReadLock() throws {
        let setup = try RemoteDeliveryTests.Setup()
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let child = try ChildProcess(["remote-coordinated-saver", setup.file.path, "saved under our read lock"], environment: environment)
        defer { child.closeInput(); child.waitForExit() }
        #expect(child.expect("PRESENTING") == "PRESENTING")
        // Without borrowing, the save would wait for our read lock and our read for the save: a
        // wait cycle, ended only by the hang guard (timedOut).
        let coordinator = setup.coordinator(timeout: Polling.hangGuard)
        let text = try coordinator.coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "saved under our read lock")  // a wait cycle would have ended in timedOut
        #expect(child.readLine() == "SAVED")
        // Our read lock was given back whole: another process can write now.
        try setup.coordinator(timeout: Polling.hangGuard).coordinate(writingItemAt: setup.file) { _ in }
    }

    @Test("asked to save, a stopped presenter process costs the read its timeout; one killed with kill -9 lets it go on at once")
    func stoppedAndKilledSavers() throws {
        let setup = try RemoteDeliveryTests.Setup()
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let child = try ChildProcess(["remote-coordinated-saver", setup.file.path, "never saved"], environment: environment)
        #expect(child.expect("PRESENTING") == "PRESENTING")
        #expect(child.stopAndWaitUntilStopped())
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: CoordinationError.self) {
            try setup.coordinator(timeout: .milliseconds(300)).coordinate(readingItemAt: setup.file) { _ in }
        }
        #expect(clock.now - start >= .milliseconds(300))  // never before its timeout
        child.kill9()
        let text = try setup.coordinator(timeout: nil).coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "old")
        // Seen dead at once: not waited out to `answerLimit` (which would count a cut-off).
        #expect(setup.runtime.remote.delivery.cutOffCount == 0)
    }

    @Test("a save that fails in the other process (a read-only file system) vetoes our read with its error",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func failedSaveVetoesTheRead() throws {
        let setup = try RemoteDeliveryTests.Setup()
        let mountPoint = try SmallTmpfs.mount(size: "1m", inside: setup.scratch.url, name: "readonly")
        defer { SmallTmpfs.unmount(mountPoint) }
        let file = mountPoint.appendingPathComponent("doc.txt")
        try "old".write(to: file, atomically: false, encoding: .utf8)
        try SmallTmpfs.remountReadOnly(mountPoint)
        var environment = ProcessInfo.processInfo.environment
        environment[LockDirectory.environmentVariable] = setup.lockDirectory
        environment[RemotePresence.environmentVariable] = "1"
        let child = try ChildProcess(["remote-coordinated-saver", file.path, "cannot be written"], environment: environment)
        defer { child.closeInput(); child.waitForExit() }
        #expect(child.expect("PRESENTING") == "PRESENTING")
        let ran = Locked(false)
        do {
            try setup.coordinator(timeout: Polling.hangGuard).coordinate(readingItemAt: file) { _ in ran.withLock { $0 = true } }
            Issue.record("the read was not refused")
        } catch CoordinationError.presenterFailed(let error) {
            let remote = error as NSError
            #expect(remote.domain == NSCocoaErrorDomain)
            #expect(!remote.localizedDescription.isEmpty)
        }
        #expect(!ran.withLock { $0 })
        #expect(child.readLine()?.hasPrefix("SAVE-FAILED") == true)
    }
}
