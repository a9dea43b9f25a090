import FileCoordination
import Foundation
import FoundationCompatibility
import Synchronization
import Testing

/// Runs the Apple-platform code of AppleStyleCode.swift and checks what it does.
@Suite("Apple-style code on Linux", .serialized)
struct AppleStyleCodeTests {
    @Test("the error: forms write and read the bytes, and leave the error nil on success")
    func errorFormsReadAndWrite() throws {
        let scratch = try Scratch()
        let log = AppendOnlyLog(url: scratch.file("app.log"))
        try log.append("one")
        try log.append("two")
        #expect(try log.read() == "one\ntwo\n")
        #expect(log.readIgnoringErrors() == Data("one\ntwo\n".utf8))

        var error: NSError?
        var read: Data?
        NSFileCoordinator(filePresenter: nil).coordinate(readingItemAt: log.url, error: &error) { url in
            read = try? Data(contentsOf: url)
        }
        #expect(error == nil)
        #expect(read == Data("one\ntwo\n".utf8))
    }

    @Test("a registered NSObject presenter gives way to a writer, reacquires and hears of the change")
    func presenterHearsOfWrites() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "first\n")
        let watcher = DocumentWatcher(url: file)
        NSFileCoordinator.addFilePresenter(watcher)
        defer { NSFileCoordinator.removeFilePresenter(watcher) }

        try AppendOnlyLog(url: file).append("second")
        // .forMerging: relinquish, save (nothing unsaved), then after the write: reacquire and didChange.
        #expect(watcher.log.waitFor(4))
        watcher.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        let messages = watcher.log.all
        #expect(messages.sorted() == ["didChange", "reacquire", "relinquishToWriter", "save"])
        if let relinquished = messages.firstIndex(of: "relinquishToWriter"), let reacquired = messages.firstIndex(of: "reacquire") {
            #expect(relinquished < reacquired)
        }
        #expect(contents(of: file) == "first\nsecond\n")
    }

    @Test("savePresentedItemChanges writes through NSFileCoordinator(filePresenter: self) before a reader reads")
    func presenterSavesBeforeRead() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "on disk")
        let watcher = DocumentWatcher(url: file)
        NSFileCoordinator.addFilePresenter(watcher)
        defer { NSFileCoordinator.removeFilePresenter(watcher) }

        watcher.edit("unsaved edit")
        // The reader waits for the presenter's save; the presenter's own coordinated write joins
        // the reader's locks (no deadlock) and does not message the presenter itself.
        #expect(try AppendOnlyLog(url: file).read() == "unsaved edit")
        #expect(watcher.log.waitFor(1))
        watcher.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        #expect(watcher.log.all == ["save"])
    }

    @Test("a presenter refusing to save makes the reader fail with an NSError in Cocoa's domain")
    func refusalBecomesCocoaError() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "on disk")
        let watcher = DocumentWatcher(url: file)
        NSFileCoordinator.addFilePresenter(watcher)
        defer { NSFileCoordinator.removeFilePresenter(watcher) }

        let refusal = NSError(domain: "com.example.watcher", code: 7,
                              userInfo: [NSLocalizedDescriptionKey: "The draft could not be saved."])
        watcher.refuseToSave(with: refusal)
        var error: NSError?
        var accessorRan = false
        NSFileCoordinator(filePresenter: nil).coordinate(readingItemAt: file, options: [], error: &error) { _ in
            accessorRan = true
        }
        #expect(!accessorRan, "the accessor does not run when the coordination fails")
        let failure = try #require(error)
        #expect(failure.domain == NSCocoaErrorDomain)
        #expect(failure.code == NSFileReadUnknownError)
        #expect(failure.localizedDescription == "The draft could not be saved.")
        #expect(failure.userInfo[NSURLErrorKey] as? URL == file)
        let underlying = try #require(failure.userInfo[NSUnderlyingErrorKey] as? CoordinationError)
        guard case .presenterFailed(let presenterError) = underlying else {
            Issue.record("expected presenterFailed, got \(underlying)")
            return
        }
        #expect((presenterError as NSError).domain == "com.example.watcher")
        #expect((presenterError as NSError).code == 7)

        // A refusal already in Cocoa's domain keeps its code, as the thrown error of `read()` shows.
        watcher.refuseToSave(with: NSError(domain: NSCocoaErrorDomain, code: NSFileWriteOutOfSpaceError))
        #expect {
            _ = try AppendOnlyLog(url: file).read()
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSFileWriteOutOfSpaceError
        }
    }

    @Test("a cancelled coordinator fails with NSUserCancelledError without running the accessor")
    func cancelled() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let coordinator = NSFileCoordinator(filePresenter: nil)
        coordinator.cancel()
        var error: NSError?
        var accessorRan = false
        coordinator.coordinate(writingItemAt: file, options: .forReplacing, error: &error) { _ in accessorRan = true }
        #expect(!accessorRan)
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSUserCancelledError)
        #expect(error?.userInfo[NSFilePathErrorKey] as? String == file.path)
    }

    @Test("copying reads one item and writes another; moving announces the move to the presenter")
    func copyAndMove() throws {
        let scratch = try Scratch()
        let source = scratch.file("a.txt", contents: "payload")
        let copy = scratch.file("b.txt")
        try FileOperations.copy(source, to: copy)
        #expect(contents(of: copy) == "payload")

        let watcher = DocumentWatcher(url: copy)
        NSFileCoordinator.addFilePresenter(watcher)
        defer { NSFileCoordinator.removeFilePresenter(watcher) }
        let destination = scratch.file("c.txt")
        try FileOperations.move(copy, to: destination)
        // relinquishToWriter, reacquire, didMove (in an order the queue decides).
        #expect(watcher.log.waitFor(3))
        watcher.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        #expect(watcher.log.all.contains("didMove:c.txt"))
        #expect(watcher.presentedItemURL?.lastPathComponent == "c.txt")
        #expect(contents(of: destination) == "payload")
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }

    @Test("a coordinator acting for a presenter does not message that presenter")
    func ownPresenterNotMessaged() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "x")
        let watcher = DocumentWatcher(url: file)
        NSFileCoordinator.addFilePresenter(watcher)
        defer { NSFileCoordinator.removeFilePresenter(watcher) }
        var error: NSError?
        NSFileCoordinator(filePresenter: watcher).coordinate(writingItemAt: file, options: .forMerging, error: &error) { url in
            try? Data("mine".utf8).write(to: url)
        }
        #expect(error == nil)
        watcher.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        #expect(watcher.log.all.isEmpty)
        #expect(contents(of: file) == "mine")
    }

    @Test("the queue form runs the accessor on the queue with the bytes, or with an NSError")
    func queueForm() throws {
        let scratch = try Scratch()
        let file = scratch.file("doc.txt", contents: "async")
        let result = Mutexed<Result<Data, Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        FileOperations.readAsynchronously(file) { outcome in
            result.set(outcome)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(try result.get()?.get() == Data("async".utf8))

        // Not a file URL: the accessor gets a Cocoa error instead.
        let remote = try #require(URL(string: "https://example.com/doc.txt"))
        FileOperations.readAsynchronously(remote) { outcome in
            result.set(outcome)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        guard case .failure(let error)? = result.get() else {
            Issue.record("expected a failure")
            return
        }
        #expect((error as NSError).domain == NSCocoaErrorDomain)
        #expect((error as NSError).code == NSFileReadUnknownError)
    }

    @Test("a prepared batch asks each presenter once, then deletes; reacquirers run at completion")
    func batch() throws {
        let scratch = try Scratch()
        let first = scratch.file("1.txt", contents: "1")
        let second = scratch.file("2.txt", contents: "2")
        let watcher = DocumentWatcher(url: first)
        NSFileCoordinator.addFilePresenter(watcher)
        defer { NSFileCoordinator.removeFilePresenter(watcher) }
        #expect(FileOperations.deleteAll([first, second]) == nil)
        #expect(!FileManager.default.fileExists(atPath: first.path))
        #expect(!FileManager.default.fileExists(atPath: second.path))
        #expect(watcher.log.waitFor(2))
        watcher.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
        #expect(watcher.log.all == ["relinquishToWriter", "reacquire"])
    }

    @Test("filePresenters lists registered presenters; a deallocated one just stops receiving messages")
    func registry() throws {
        let scratch = try Scratch()
        let file = scratch.file("app.log", contents: "")
        let logger = Logger(url: file)
        NSFileCoordinator.addFilePresenter(logger)
        #expect(NSFileCoordinator.filePresenters.contains { $0 === logger })
        NSFileCoordinator.removeFilePresenter(logger)
        #expect(!NSFileCoordinator.filePresenters.contains { $0 === logger })

        weak var gone: DocumentWatcher?
        do {
            let watcher = DocumentWatcher(url: file)
            gone = watcher
            NSFileCoordinator.addFilePresenter(watcher)
            NSFileCoordinator.addFilePresenter(logger)
        }
        #expect(gone == nil, "registering does not keep the presenter alive")
        try AppendOnlyLog(url: file).append("still works")
        #expect(try AppendOnlyLog(url: file).read() == "still works\n")
        NSFileCoordinator.removeFilePresenter(logger)
    }

    @Test("options have Apple's bit values; intents report their URL")
    func optionsAndIntents() throws {
        #expect(NSFileCoordinator.ReadingOptions.withoutChanges.rawValue == 1)
        #expect(NSFileCoordinator.ReadingOptions.resolvesSymbolicLink.rawValue == 2)
        #expect(NSFileCoordinator.ReadingOptions.immediatelyAvailableMetadataOnly.rawValue == 4)
        #expect(NSFileCoordinator.ReadingOptions.forUploading.rawValue == 8)
        #expect(NSFileCoordinator.WritingOptions.forDeleting.rawValue == 1)
        #expect(NSFileCoordinator.WritingOptions.forMoving.rawValue == 2)
        #expect(NSFileCoordinator.WritingOptions.forMerging.rawValue == 4)
        #expect(NSFileCoordinator.WritingOptions.forReplacing.rawValue == 8)
        #expect(NSFileCoordinator.WritingOptions.contentIndependentMetadataOnly.rawValue == 16)
        let url = URL(fileURLWithPath: "/tmp/x.txt")
        #expect(NSFileAccessIntent.readingIntent(with: url, options: .withoutChanges).url == url)
        #expect(NSFileAccessIntent.writingIntent(with: url, options: .forDeleting).url == url)
        let coordinator = NSFileCoordinator()
        coordinator.purposeIdentifier = "com.example.shared"
        #expect(coordinator.purposeIdentifier == "com.example.shared")
    }
}

/// A value shared between the test and a callback.
final class Mutexed<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    func set(_ newValue: Value) { storage.withLock { $0 = newValue } }
    func get() -> Value { storage.withLock { $0 } }
}
