import Foundation
import Testing
@testable import FileCoordination

/// A presenter whose save for a reader is refused with an upgrade conflict (its own document
/// reloading under a read while another process's save upgrades: `.wouldDeadlock`) is asked
/// again by the reader, which holds no lock yet; the read goes on once the save is made. Seen as
/// `killingAnEditorLosesNothingSaved` failing now and then on a loaded machine (issue 15).
@Suite("Upgrade conflicts of a presenter's save")
struct UpgradeConflictRetryTests {
    @Test("a save refused with an upgrade conflict is asked again, and the read goes on", arguments: [false, true])
    func refusedSaveIsAskedAgain(fromAnotherProcess: Bool) throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let conflict = CoordinationError.wouldDeadlock(file)
        // Another process's refusal arrives as its domain, code and description.
        let refusal: any Error = fromAnotherProcess ? RemoteErrorDescription(describing: conflict).nsError : conflict
        let asked = Locked(0)
        presenter.refuseSave.withLock { $0 = refusal }
        presenter.onSave.withLock {
            $0 = { presenter in
                // The second request finds the conflict gone.
                if asked.withLock({ $0 += 1; return $0 }) == 2 { presenter.refuseSave.withLock { $0 = nil } }
            }
        }
        let text = try withPresenters([presenter]) {
            try Coordinator().coordinate(readingItemAt: file) { try String(contentsOf: $0, encoding: .utf8) }
        }
        #expect(text == "x")
        #expect(asked.withLock { $0 } == 2)
    }

    @Test("any other refusal of a save still vetoes the read at once")
    func otherRefusalsVeto() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        presenter.refuseSave.withLock { $0 = CoordinationError.timedOut }
        #expect(throws: CoordinationError.self) {
            try withPresenters([presenter]) { try Coordinator().coordinate(readingItemAt: file) { _ in } }
        }
        #expect(presenter.log.filter { $0 == "save" }.count == 1)
    }
}
