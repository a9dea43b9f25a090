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
        // Without borrowing the save waits for our read lock: the read fails after its timeout.
        let coordinator = setup.coordinator(timeout: .seconds(10))
        let clock = ContinuousClock()
        let start = clock.now
        let text = try coordinator.coordinate(readingItemAt: setup.file) { url in
            try String(contentsOf: url, encoding: .utf8)
        }
        #expect(text == "saved under our read lock")
        #expect(clock.now - start < .seconds(5))
        #expect(child.readLine() == "SAVED")
        // Our read lock was given back whole: another process can write now.
        try setup.coordinator(timeout: .seconds(10)).coordinate(writingItemAt: setup.file) { _ in }
    }
}
