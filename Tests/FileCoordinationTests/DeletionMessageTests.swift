import Foundation
import Testing
@testable import FileCoordination

@Suite("Deletion messages")
struct DeletionMessageTests {
    @Test("a move into an empty place sends no deletion message for the item that was never there")
    func moveIntoAnEmptyPlaceDeletesNothing() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let old = scratch.file("old.txt", contents: "x")
        let new = scratch.file("folder/new.txt")
        let folderPresenter = RecordingPresenter(directory)
        let newPresenter = RecordingPresenter(new)  // a presenter waiting for an item not there yet
        try withPresenters([folderPresenter, newPresenter]) {
            let coordinator = Coordinator()
            try coordinator.coordinate(writingItemAt: old, options: .forMoving, writingItemAt: new, options: .forReplacing) { from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
        }
        #expect(!folderPresenter.log.contains { $0.hasPrefix("accommodateSubitemDeletion") })
        #expect(!newPresenter.log.contains("accommodateDeletion"))
        #expect(folderPresenter.log.contains("subitemDidMove:old.txt->new.txt"))
    }

    @Test("replacing an item that exists still asks for the deletion")
    func replacingAnExistingItemIsADeletion() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let old = scratch.file("old.txt", contents: "x")
        let new = scratch.file("folder/new.txt", contents: "there")
        let folderPresenter = RecordingPresenter(directory)
        let newPresenter = RecordingPresenter(new)
        try withPresenters([folderPresenter, newPresenter]) {
            let coordinator = Coordinator()
            try coordinator.coordinate(writingItemAt: old, options: .forMoving, writingItemAt: new, options: .forReplacing) { from, to in
                #expect(rename(from.path, to.path) == 0)
                coordinator.item(at: from, didMoveTo: to)
            }
        }
        #expect(folderPresenter.log.contains("accommodateSubitemDeletion:new.txt"))
        #expect(newPresenter.log.contains("accommodateDeletion"))
    }
}

@Suite("Purpose identifier")
struct PurposeIdentifierTests {
    @Test("the purpose stored and the purpose the locks use never differ, under concurrent readers and setters")
    func purposeAndLockGroupAgree() {
        var mismatches = 0
        for round in 0..<20 {
            let coordinator = Coordinator()
            let start = DispatchSemaphore(value: 0)
            let setter = onThread {
                start.wait()
                for step in 0..<5_000 { coordinator.purposeIdentifier = "p\(round)-\(step)" }
            }
            let reader = onThread {
                start.wait()
                for _ in 0..<5_000 { _ = coordinator.purposeIdentifier }
            }
            start.signal(); start.signal()
            _ = setter.wait(); _ = reader.wait()
            // The raw pair, not through the getter (which would store its answer in both).
            let stored = coordinator.settings.withLock { $0.purpose }
            if coordinator.owner.groupKey != stored.map(LockOwner.GroupKey.purpose) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }
}
