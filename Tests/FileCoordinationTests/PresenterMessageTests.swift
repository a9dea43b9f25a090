import Foundation
import Testing
@testable import FileCoordination

@Suite("Presenter messages")
struct PresenterMessageTests {
    @Test func aReadAsksPresentersToRelinquishAndSaveThenGivesBack() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let during = try withPresenters([presenter]) {
            try Coordinator().coordinate(readingItemAt: file) { _ in presenter.log }
        }
        // Asked to save before the read waits for its lock (its save takes a lock of its own),
        // then to relinquish once the lock is held (Docs/Coordination.md, "Who is told what").
        #expect(during == ["save", "relinquishToReader"])
        #expect(presenter.log == ["save", "relinquishToReader", "reacquireFromReader"])
    }

    @Test func withoutChangesAndMetadataOnlyReadsDoNotAskForASave() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        try withPresenters([presenter]) {
            try Coordinator().coordinate(readingItemAt: file, options: .withoutChanges) { _ in }
            try Coordinator().coordinate(readingItemAt: file, options: .immediatelyAvailableMetadataOnly) { _ in }
        }
        #expect(!presenter.log.contains("save"))
        #expect(presenter.log.filter { $0 == "relinquishToReader" }.count == 2)
    }

    @Test func aWriteAsksToRelinquishThenReportsTheChange() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let file = scratch.file("folder/doc.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let folderPresenter = RecordingPresenter(directory)
        let rootPresenter = RecordingPresenter(scratch.url)
        try withPresenters([presenter, folderPresenter, rootPresenter]) {
            try Coordinator().coordinate(writingItemAt: file) { url in
                try "y".write(to: url, atomically: false, encoding: .utf8)
            }
        }
        #expect(presenter.log == ["relinquishToWriter", "didChange", "reacquireFromWriter"])
        #expect(folderPresenter.log == ["subitemDidChange:doc.txt"])
        #expect(rootPresenter.log == ["subitemDidChange:doc.txt"])
    }

    @Test func aNewItemAppearsToItsDirectoryPresenters() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let folderPresenter = RecordingPresenter(directory)
        try withPresenters([folderPresenter]) {
            try Coordinator().coordinate(writingItemAt: scratch.file("folder/new.txt")) { url in
                try "new".write(to: url, atomically: false, encoding: .utf8)
            }
        }
        #expect(folderPresenter.log == ["subitemDidAppear:new.txt"])
    }

    @Test func theCoordinatorsOwnPresenterIsNotMessaged() throws {
        let scratch = try Scratch()
        let file = scratch.file("own.txt", contents: "x")
        let own = RecordingPresenter(file)
        let other = RecordingPresenter(file)
        try withPresenters([own, other]) {
            try Coordinator(filePresenter: own).coordinate(writingItemAt: file) { _ in }
            try Coordinator(filePresenter: own).coordinate(readingItemAt: file) { _ in }
        }
        #expect(own.log.isEmpty)
        #expect(other.log == ["relinquishToWriter", "didChange", "reacquireFromWriter",
                              "save", "relinquishToReader", "reacquireFromReader"])
    }

    @Test func aDeletionIsAccommodatedByTheItemAndItsDirectory() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let file = scratch.file("folder/gone.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        let folderPresenter = RecordingPresenter(directory)
        try withPresenters([presenter, folderPresenter]) {
            try Coordinator().coordinate(writingItemAt: file, options: .forDeleting) { url in
                try FileManager.default.removeItem(at: url)
            }
        }
        #expect(presenter.log == ["relinquishToWriter", "accommodateDeletion", "reacquireFromWriter"])
        #expect(folderPresenter.log == ["accommodateSubitemDeletion:gone.txt"])
    }

    @Test func deletingADirectoryTellsEveryPresenterInside() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("tree")
        let inner = RecordingPresenter(scratch.file("tree/a/b.txt", contents: "x"))
        try withPresenters([inner]) {
            try Coordinator().coordinate(writingItemAt: directory, options: .forDeleting) { url in
                try FileManager.default.removeItem(at: url)
            }
        }
        #expect(inner.log == ["relinquishToWriter", "accommodateDeletion", "reacquireFromWriter"])
    }

    @Test func mergingAsksForASave() throws {
        let scratch = try Scratch()
        let file = scratch.file("merge.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        try withPresenters([presenter]) {
            try Coordinator().coordinate(writingItemAt: file, options: .forMerging) { _ in }
        }
        #expect(presenter.log == ["save", "relinquishToWriter", "didChange", "reacquireFromWriter"])
    }

    @Test func aRefusalFailsTheAccessAndTheAccessorDoesNotRun() throws {
        let scratch = try Scratch()
        let file = scratch.file("refuse.txt", contents: "x")
        let presenter = RecordingPresenter(file)
        presenter.refuseSave.withLock { $0 = Refusal() }
        var ran = false
        withPresenters([presenter]) {
            #expect(fails(with: "presenterFailed") {
                try Coordinator().coordinate(readingItemAt: file) { _ in ran = true }
            })
            presenter.refuseDeletion.withLock { $0 = Refusal() }
            #expect(fails(with: "presenterFailed") {
                try Coordinator().coordinate(writingItemAt: file, options: .forDeleting) { _ in ran = true }
            })
        }
        #expect(!ran)
        #expect(FileManager.default.fileExists(atPath: file.path))
        // What was relinquished is given back even though the access failed: the delete's
        // relinquishment (the read's save was refused before anything was locked or relinquished).
        #expect(presenter.log.filter { $0.hasPrefix("reacquire") }.count == 1)
        #expect(presenter.log.first == "save", "the refused read relinquished nothing")
        #expect(readGetsIn(file))
    }

    @Test func aPresenterCanWriteFromInsideItsSaveWithoutDeadlocking() throws {
        let scratch = try Scratch()
        let file = scratch.file("save.txt", contents: "old")
        let presenter = RecordingPresenter(file)
        presenter.onSave.withLock {
            $0 = { me in
                let coordinator = Coordinator(filePresenter: me)
                coordinator.timeout = Polling.hangGuard
                try? coordinator.coordinate(writingItemAt: file) { url in
                    try "saved".write(to: url, atomically: false, encoding: .utf8)
                }
            }
        }
        let reader = patient()
        let text = try withPresenters([presenter]) {
            try reader.coordinate(readingItemAt: file) { try String(contentsOf: $0, encoding: .utf8) }
        }
        #expect(text == "saved")
    }

    @Test func movesAreAnnounced() throws {
        let scratch = try Scratch()
        let directory = try scratch.directory("folder")
        let old = scratch.file("folder/old.txt", contents: "x")
        let new = scratch.file("folder/new.txt")
        let presenter = RecordingPresenter(old)
        let folderPresenter = RecordingPresenter(directory)
        try withPresenters([presenter, folderPresenter]) {
            let coordinator = Coordinator()
            try coordinator.coordinate(writingItemAt: old, options: .forMoving, writingItemAt: new, options: .forReplacing) { from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
            #expect(presenter.log.contains("didMove:new.txt"))
            #expect(presenter.presentedItemURL?.lastPathComponent == "new.txt")
            // Now indexed under the new path: a write there reaches it.
            presenter.clear()
            try Coordinator().coordinate(writingItemAt: new) { _ in }
            #expect(presenter.log == ["relinquishToWriter", "didChange", "reacquireFromWriter"])
        }
        #expect(folderPresenter.log.contains("subitemDidMove:old.txt->new.txt"))
    }

    @Test func movingADirectoryMovesThePresentersInside() throws {
        let scratch = try Scratch()
        let from = try scratch.directory("from")
        let inner = RecordingPresenter(scratch.file("from/sub/item.txt", contents: "x"))
        try withPresenters([inner]) {
            let coordinator = Coordinator()
            let to = scratch.url.appendingPathComponent("to")
            try coordinator.coordinate(writingItemAt: from, options: .forMoving, writingItemAt: to, options: .forReplacing) { source, destination in
                try FileManager.default.moveItem(at: source, to: destination)
                coordinator.item(at: source, didMoveTo: destination)
            }
        }
        #expect(inner.log.contains("didMove:item.txt"))
        #expect(inner.presentedItemURL?.path.hasSuffix("/to/sub/item.txt") == true)
    }

    @Test func packagePresentersHearAboutItemsInside() throws {
        Coordinator.registerPackageExtension("cdmsgpkg")
        let scratch = try Scratch()
        let package = try scratch.directory("Doc.cdmsgpkg")
        let packagePresenter = RecordingPresenter(package)
        try withPresenters([packagePresenter]) {
            try Coordinator().coordinate(writingItemAt: scratch.file("Doc.cdmsgpkg/index.txt", contents: "x")) { _ in }
        }
        // The package is also a directory containing the item, so it hears that too.
        #expect(packagePresenter.log == ["relinquishToWriter", "didChange", "subitemDidChange:index.txt", "reacquireFromWriter"])
    }

    @Test func presentersWithDefaultMethodsNeverBlock() throws {
        let scratch = try Scratch()
        let file = scratch.file("minimal.txt", contents: "x")
        let presenter = MinimalPresenter(file)
        try withPresenters([presenter]) {
            try patient().coordinate(writingItemAt: file, options: .forDeleting) { _ in }
            try patient().coordinate(readingItemAt: file) { _ in }
        }
    }

    @Test func theRegistryIsWeakAndListsPresenters() throws {
        let scratch = try Scratch()
        var presenter: RecordingPresenter? = RecordingPresenter(scratch.file("weak.txt"))
        Coordinator.addFilePresenter(presenter!)
        #expect(Coordinator.filePresenters.contains { $0 === presenter })
        weak let weakPresenter = presenter
        presenter = nil
        #expect(weakPresenter == nil)
        #expect(!Coordinator.filePresenters.contains { $0 === weakPresenter })
    }

    @Test func aPresenterWithoutAURLYetIsFoundOnceItHasOne() throws {
        let scratch = try Scratch()
        let file = scratch.file("later.txt", contents: "x")
        let presenter = RecordingPresenter(nil)
        try withPresenters([presenter]) {
            try Coordinator().coordinate(writingItemAt: file) { _ in }
            #expect(presenter.log.isEmpty)
        }
    }

    @Test func prepareMessagesPresentersOnceForTheBatch() throws {
        let scratch = try Scratch()
        let a = scratch.file("a.txt", contents: "a")
        let b = scratch.file("b.txt", contents: "b")
        let presenterA = RecordingPresenter(a), presenterB = RecordingPresenter(b)
        let completion = Box<(@Sendable () -> Void)?>(nil)
        try withPresenters([presenterA, presenterB]) {
            let coordinator = Coordinator(filePresenter: nil)
            try coordinator.prepare(forReadingItemsAt: [a], writingItemsAt: [b]) { done in
                try coordinator.coordinate(readingItemAt: a, options: .withoutChanges) { _ in }
                completion.value = done
            }
            #expect(presenterA.log == ["save", "relinquishToReader"], "not messaged again inside the batch")
            #expect(!presenterA.log.contains("reacquireFromReader"))
            completion.value?()
            #expect(presenterA.log.last == "reacquireFromReader")
            #expect(presenterB.log.contains("reacquireFromWriter"))
        }
    }

    @Test func aPresenterThatNeverAnswersTimesOut() throws {
        final class Silent: FilePresenter {
            let presentedItemURL: URL?
            let presentedItemOperationQueue = OperationQueue()
            init(_ url: URL) { presentedItemURL = url }
            func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {}
        }
        let scratch = try Scratch()
        let file = scratch.file("silent.txt", contents: "x")
        let silent = Silent(file)
        withPresenters([silent]) {
            // The coordinator's timeout is what this test is about: it ends the wait for the answer.
            let asker = Coordinator()
            asker.timeout = .milliseconds(100)
            #expect(fails(with: "timedOut") { try asker.coordinate(writingItemAt: file) { _ in } })
        }
        #expect(readGetsIn(file))
    }
}
