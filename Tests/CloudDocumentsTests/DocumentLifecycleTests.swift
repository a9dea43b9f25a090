import Foundation
import Glibc
import Testing
@testable import CloudDocuments

// MARK: - Test document and helpers (shared by the Document*Tests files)

/// A UTF-8 note whose hooks record what happens to them. `load` rejects contents starting with
/// "REJECT". `contents(forType:)` can be made to wait on a gate, to hold a save in the middle.
final class NoteDocument: CloudDocument, @unchecked Sendable {
    // @unchecked: every added property is Locked or immutable.
    struct LoadRejected: Error, Equatable {}

    private let body = Locked("")
    /// Names of hook calls, in order: "contents", "load", "disable", "enable", "error".
    let hookCalls = Locked<[String]>([])
    /// Whether every hook call ran on the document queue.
    let hooksOnDocumentQueue = Locked(true)
    /// Errors passed to handleError, with userInteractionPermitted.
    let handledErrors = Locked<[(any Error, Bool)]>([])
    /// When set, `contents(forType:)` signals `entered` and waits for `release` first.
    let gate = Locked<SaveGate?>(nil)

    var text: String {
        get { body.withLock { $0 } }
        set { body.withLock { $0 = newValue } }
    }

    /// Sets the text and registers an undo action, like an editor would.
    func edit(_ newText: String) {
        let old = body.withLock { text in
            let old = text
            text = newText
            return old
        }
        undoManager.registerUndo(withTarget: self) { document in document.edit(old) }
    }

    private func record(_ call: String) {
        let onQueue = OperationQueue.current === presentedItemOperationQueue
        hooksOnDocumentQueue.withLock { $0 = $0 && onQueue }
        hookCalls.withLock { $0.append(call) }
    }

    func calls(_ name: String) -> Int { hookCalls.withLock { $0.filter { $0 == name }.count } }

    override func contents(forType typeName: String) throws -> DocumentContents {
        record("contents")
        let snapshot = Data(text.utf8)
        if let gate = gate.withLock({ $0 }) {
            gate.entered.signal()
            gate.release.wait()
        }
        return .data(snapshot)
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        record("load")
        guard let data = contents.data else { throw DocumentError.contentsInvalid("a folder") }
        let text = String(decoding: data, as: UTF8.self)
        if text.hasPrefix("REJECT") { throw LoadRejected() }
        self.text = text
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        record("error")
        handledErrors.withLock { $0.append((error, userInteractionPermitted)) }
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }

    override func disableEditing() { record("disable") }
    override func enableEditing() { record("enable") }
}

/// Two semaphores to hold a save inside `contents(forType:)`.
final class SaveGate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
}

/// Records every `stateChangedNotification` of one document, and the queue it arrived on.
final class StateRecorder: @unchecked Sendable {
    // @unchecked: `token` is written once in init and read in deinit; the log is Sendable.
    private final class Log: Sendable {
        let states = Locked<[DocumentState]>([])
        let allOnDocumentQueue = Locked(true)
    }
    private let log = Log()
    private var token: (any NSObjectProtocol)?

    init(_ document: CloudDocument) {
        let queue = document.presentedItemOperationQueue
        let log = self.log
        token = NotificationCenter.default.addObserver(
            forName: CloudDocument.stateChangedNotification, object: document, queue: nil
        ) { note in
            let state = note.userInfo?[CloudDocument.stateUserInfoKey] as? DocumentState
            let onQueue = OperationQueue.current === queue
            log.allOnDocumentQueue.withLock { $0 = $0 && onQueue }
            log.states.withLock { $0.append(state ?? DocumentState(rawValue: 1 << 30)) }
        }
    }

    deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }

    var recorded: [DocumentState] { log.states.withLock { $0 } }
    var postedOnDocumentQueue: Bool { log.allOnDocumentQueue.withLock { $0 } }
    func reset() { log.states.withLock { $0.removeAll() } }
}

/// Takes items from a state stream.
struct StateStream {
    var iterator: AsyncStream<DocumentState>.Iterator

    init(_ document: CloudDocument) {
        iterator = document.stateChanges.makeAsyncIterator()
    }

    /// The next `count` states (they are buffered, so this returns at once when they were
    /// announced already).
    mutating func next(_ count: Int) async -> [DocumentState] {
        var result: [DocumentState] = []
        while result.count < count, let state = await iterator.next() { result.append(state) }
        return result
    }

    /// States up to and including the first one matching `predicate`.
    mutating func until(_ predicate: (DocumentState) -> Bool) async -> [DocumentState] {
        var result: [DocumentState] = []
        while let state = await iterator.next() {
            result.append(state)
            if predicate(state) { break }
        }
        return result
    }
}

/// Runs blocking work (a synchronous coordinated access) on a thread of its own, keeping Swift's
/// cooperative threads (and libdispatch's global pool, which grows slowly) free.
func onBackgroundThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue(label: "test.blocking").async { continuation.resume(with: Result { try body() }) }
    }
}

/// Waits until the document queue has run everything queued on it so far (presenter messages
/// included).
func drainDocumentQueue(_ document: CloudDocument) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        document.presentedItemOperationQueue.addOperation { continuation.resume() }
    }
}

/// The file's bytes, or nil.
func bytes(at url: URL) -> Data? { try? Data(contentsOf: url) }

/// Whether `document` is currently a registered presenter.
func isRegistered(_ document: CloudDocument) -> Bool {
    Coordinator.filePresenters.contains { $0 === document }
}

/// A fresh temporary folder for async tests, removed afterwards.
func withDocumentFolder<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("clouddocs-doc-XXXXXX").path
    var template = Array(base.utf8CString)
    guard let made = mkdtemp(&template) else { throw DocumentError.saveFailed(URL(fileURLWithPath: "/tmp"), reason: "mkdtemp", errno: errno) }
    let url = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    defer { POSIX.removeTree(url.path) }
    return try await body(url)
}

/// Registers a save observer and returns a stream of save outcomes.
func saveOutcomes(_ document: CloudDocument) -> AsyncStream<Bool> {
    let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
    document.saveObserver = { outcome in
        if case .success = outcome { continuation.yield(true) } else { continuation.yield(false) }
    }
    return stream
}

// MARK: - Lifecycle

@Suite("CloudDocument: open, save, close, revert, states", .timeLimit(.minutes(1)))
struct DocumentLifecycleTests {
    @Test("a new document is closed, with identity derived from its URL and nothing loaded")
    func newDocument() throws {
        let url = URL(fileURLWithPath: "/tmp/folder/My Notes.txt")
        let document = NoteDocument(fileURL: url)
        #expect(document.documentState == .closed)
        #expect(document.fileURL == url)
        #expect(document.presentedItemURL == url)
        #expect(document.fileType == "public.plain-text")
        #expect(document.savingFileType == "public.plain-text")
        #expect(document.localizedName == "My Notes")
        #expect(document.fileModificationDate == nil)
        #expect(document.progress == nil)
        #expect(document.hasUnsavedChanges == false)
        #expect(document.lastError == nil)
        #expect(document.fileNameExtension(forType: "public.png", saveOperation: .forCreating) == "png")
        #expect(!isRegistered(document))
    }

    @Test("open → normal, save, close → closed: exact state sequence, presenter registration, file bytes")
    func openSaveClose() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("version 1", at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            var stream = StateStream(document)

            try await document.open()
            #expect(document.documentState == .normal)
            #expect(document.text == "version 1")
            #expect(isRegistered(document))
            let info = try FileManager.default.attributesOfItem(atPath: url.path)
            let modified = try #require(info[.modificationDate] as? Date)
            #expect(abs(try #require(document.fileModificationDate).timeIntervalSince(modified)) < 0.000_01)
            #expect(recorder.recorded == [.normal])

            document.text = "version 2"
            document.updateChangeCount(.done)
            #expect(document.hasUnsavedChanges)
            try await document.save(to: url, for: .forOverwriting)
            #expect(text(at: url) == "version 2")
            #expect(!document.hasUnsavedChanges)
            #expect(listing(folder) == ["note.txt"])
            #expect(recorder.recorded == [.normal], "a successful save of a normal document changes no state")

            try await document.close()
            #expect(document.documentState == .closed)
            #expect(!isRegistered(document))
            #expect(recorder.recorded == [.normal, .closed])
            #expect(await stream.next(2) == [.normal, .closed])
            #expect(recorder.postedOnDocumentQueue)
            #expect(document.hooksOnDocumentQueue.withLock { $0 })
            #expect(document.hookCalls.withLock { $0 } == ["load", "contents"])
        }
    }

    @Test("closing a closed document does nothing; opening an open one throws documentAlreadyOpen")
    func misuse() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("x", at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            try await document.close()
            try await document.open()
            await #expect(throws: DocumentError.self) { try await document.open() }
            do {
                try await document.open()
            } catch let error as DocumentError {
                guard case .documentAlreadyOpen = error else { Issue.record("got \(error)"); return }
            }
            #expect(recorder.recorded == [.normal])
            #expect(document.calls("error") == 0, "misuse is thrown, not passed to handleError")
        }
    }

    @Test("saving a new (closed) document for creating writes it and opens it; a second creating save fails untouched")
    func createBySaving() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("new.txt")
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            document.text = "fresh"
            try await document.save(to: url, for: .forCreating)
            #expect(text(at: url) == "fresh")
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.normal])
            #expect(isRegistered(document))
            #expect(document.fileModificationDate != nil)

            let other = NoteDocument(fileURL: url)
            let otherRecorder = StateRecorder(other)
            other.text = "intruder"
            await #expect(throws: DocumentError.self) { try await other.save(to: url, for: .forCreating) }
            guard case .alreadyExists? = other.lastError as? DocumentError else {
                Issue.record("expected alreadyExists, got \(String(describing: other.lastError))")
                return
            }
            #expect(text(at: url) == "fresh")
            #expect(other.documentState == .closed, "a closed document does not gain savingError")
            #expect(otherRecorder.recorded == [])
            #expect(other.calls("error") == 1)
            #expect(!isRegistered(other))
            try await document.close()
        }
    }

    @Test("save to another URL moves the document there and re-registers the presenter")
    func saveAs() async throws {
        try await withDocumentFolder { folder in
            let first = folder.appendingPathComponent("a.txt")
            let second = folder.appendingPathComponent("b.txt")
            try put("A", at: first)
            let document = NoteDocument(fileURL: first)
            try await document.open()
            document.text = "B"
            document.updateChangeCount(.done)
            try await document.save(to: second, for: .forCreating)
            #expect(document.fileURL == second)
            #expect(document.localizedName == "b")
            #expect(text(at: first) == "A")
            #expect(text(at: second) == "B")
            #expect(!document.hasUnsavedChanges)
            #expect(isRegistered(document))
            // The registry now knows it under the new URL: a coordinated write there reaches it.
            var stream = StateStream(document)
            try await onBackgroundThread {
                try Coordinator().coordinate(writingItemAt: second) { url in try put("from outside", at: url) }
            }
            #expect(await stream.until { $0 == .normal } == [.editingDisabled, .normal])
            #expect(document.text == "from outside")
            try await document.close()
        }
    }

    // MARK: Open failures

    @Test("opening a missing file throws fileNotFound, stays closed, creates nothing, registers nothing")
    func openMissing() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("absent.txt")
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            do {
                try await document.open()
                Issue.record("open succeeded")
            } catch let error as DocumentError {
                guard case .fileNotFound(let reported) = error else { Issue.record("got \(error)"); return }
                #expect(reported == url)
            }
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [])
            #expect(!isRegistered(document))
            #expect(listing(folder) == [])
            #expect(document.calls("error") == 1)
            #expect(document.calls("load") == 0)
        }
    }

    @Test("load rejecting the contents → couldNotLoad with the underlying error; closed; file untouched")
    func openRejected() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("bad.txt")
            try put("REJECT me", at: url)
            let before = bytes(at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            do {
                try await document.open()
                Issue.record("open succeeded")
            } catch let error as DocumentError {
                guard case .couldNotLoad(let reported, let underlying) = error else { Issue.record("got \(error)"); return }
                #expect(reported == url)
                #expect(underlying is NoteDocument.LoadRejected)
            }
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [])
            #expect(!isRegistered(document))
            #expect(bytes(at: url) == before)
            #expect(listing(folder) == ["bad.txt"])
            #expect(document.lastError is DocumentError)
        }
    }

    @Test("unreadable items → notReadable, closed, untouched: a FIFO, and a file whose read fails with EIO")
    func openUnreadable() async throws {
        try await withDocumentFolder { folder in
            let fifo = folder.appendingPathComponent("pipe.txt")
            #expect(mkfifo(fifo.path, 0o644) == 0)
            let document = NoteDocument(fileURL: fifo)
            do {
                try await document.open()
                Issue.record("open succeeded")
            } catch let error as DocumentError {
                guard case .notReadable(_, let why) = error else { Issue.record("got \(error)"); return }
                #expect(why.contains("FIFO"))
            }
            #expect(document.documentState == .closed)
            #expect(!isRegistered(document))

            // /proc/self/mem is a regular file whose first page is unmapped: read(2) fails with EIO.
            let link = folder.appendingPathComponent("mem.txt")
            #expect(symlink("/proc/self/mem", link.path) == 0)
            let failing = NoteDocument(fileURL: link)
            do {
                try await failing.open()
                Issue.record("open succeeded")
            } catch let error as DocumentError {
                guard case .notReadable(_, let why) = error else { Issue.record("got \(error)"); return }
                #expect(why.contains("read failed"))
            }
            #expect(failing.documentState == .closed)
            #expect(!isRegistered(failing))
            #expect(failing.calls("load") == 0)
        }
    }

    // MARK: Save failures

    @Test("a failed save → savingError, handleError, original intact, no temporary; the next save recovers")
    func failedSaveAndRecovery() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("original", at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            var stream = StateStream(document)
            try await document.open()
            document.text = "edited"
            document.updateChangeCount(.done)

            SafeSave.injectFailure(at: .write, errno: EIO, forTarget: url)
            do {
                try await document.save(to: url, for: .forOverwriting)
                Issue.record("save succeeded")
            } catch let error as DocumentError {
                guard case .saveFailed(_, _, let code) = error else { Issue.record("got \(error)"); return }
                #expect(code == EIO)
            }
            #expect(document.documentState == .savingError)
            #expect(text(at: url) == "original")
            #expect(listing(folder) == ["note.txt"])
            #expect(document.hasUnsavedChanges, "the changes are kept")
            let handled = document.handledErrors.withLock { $0 }
            #expect(handled.count == 1)
            #expect(handled.first?.1 == true, "an explicit save permits user interaction")
            #expect(document.lastError is DocumentError)

            try await document.save(to: url, for: .forOverwriting)
            #expect(text(at: url) == "edited")
            #expect(document.documentState == .normal)
            #expect(!document.hasUnsavedChanges)
            #expect(recorder.recorded == [.normal, .savingError, .normal])
            #expect(await stream.next(3) == [.normal, .savingError, .normal])
            try await document.close()
        }
    }

    @Test("an error thrown by contents(forType:) fails the save like a disk error")
    func contentsThrows() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("image.unknownext")
            try put("bytes", at: url)
            // The base class's contents(forType:) throws unsupportedFileType.
            final class Plain: CloudDocument, @unchecked Sendable {
                override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {}
            }
            let document = Plain(fileURL: url)
            try await document.open()
            document.updateChangeCount(.done)
            await #expect(throws: DocumentError.self) { try await document.save(to: url, for: .forOverwriting) }
            #expect(document.documentState == .savingError)
            #expect(text(at: url) == "bytes")
            guard case .unsupportedFileType(let type)? = document.lastError as? DocumentError else {
                Issue.record("got \(String(describing: document.lastError))")
                return
            }
            #expect(type == "dyn.ext-unknownext")
        }
    }

    @Test("saving into a folder that vanished → folderMissing and savingError; saving after it is back recovers")
    func vanishedFolder() async throws {
        try await withDocumentFolder { folder in
            let sub = folder.appendingPathComponent("sub", isDirectory: true)
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
            let url = sub.appendingPathComponent("note.txt")
            try put("v1", at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            try await document.open()
            try FileManager.default.removeItem(at: sub)
            document.text = "v2"
            document.updateChangeCount(.done)
            do {
                try await document.save(to: url, for: .forOverwriting)
                Issue.record("save succeeded")
            } catch let error as DocumentError {
                guard case .folderMissing = error else { Issue.record("got \(error)"); return }
            }
            #expect(document.documentState == .savingError)
            #expect(!FileManager.default.fileExists(atPath: sub.path), "nothing recreated the folder")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
            try await document.save(to: url, for: .forOverwriting)
            #expect(text(at: url) == "v2")
            #expect(listing(sub) == ["note.txt"])
            #expect(recorder.recorded == [.normal, .savingError, .normal])
            try await document.close()
        }
    }

    @Test("a full disk (64 KiB tmpfs) → diskFull, savingError, original bytes intact, no temporary left",
          .enabled(if: TmpfsMount.isAvailable, TmpfsMount.unavailableMessage))
    func diskFull() async throws {
        try await withDocumentFolder { outer in
            let point = outer.appendingPathComponent("mnt", isDirectory: true)
            #expect(mkdir(point.path, 0o755) == 0)
            guard Glibc.mount("tmpfs", point.path, "tmpfs", 0, "size=64k,mode=0755") == 0 else {
                Issue.record("mount failed: errno \(errno)")
                return
            }
            defer { _ = umount2(point.path, Int32(MNT_DETACH)) }
            let url = point.appendingPathComponent("note.txt")
            let original = String(repeating: "original line\n", count: 100)
            try put(original, at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            try await document.open()
            document.text = String(repeating: "x", count: 200 * 1024)
            document.updateChangeCount(.done)
            do {
                try await document.save(to: url, for: .forOverwriting)
                Issue.record("save succeeded on a full disk")
            } catch let error as DocumentError {
                guard case .diskFull = error else { Issue.record("got \(error)"); return }
            }
            #expect(document.documentState == .savingError)
            #expect(text(at: url) == original)
            #expect(listing(point) == ["note.txt"], "the temporary file was removed")
            #expect(document.hasUnsavedChanges)

            document.text = "small again"
            document.updateChangeCount(.done)
            try await document.save(to: url, for: .forOverwriting)
            #expect(text(at: url) == "small again")
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.normal, .savingError, .normal])
            try await document.close()
        }
    }

    // MARK: Close

    @Test("close saves unsaved changes first")
    func closeSaves() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("before", at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            try await document.open()
            document.edit("after")
            try await document.close()
            #expect(text(at: url) == "after")
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [.normal, .closed])
        }
    }

    @Test("close whose save fails throws, keeps the document open with savingError; closing again works")
    func closeSaveFails() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("before", at: url)
            let document = NoteDocument(fileURL: url)
            let recorder = StateRecorder(document)
            try await document.open()
            document.edit("after")
            SafeSave.injectFailure(at: .rename, errno: EIO, forTarget: url)
            await #expect(throws: DocumentError.self) { try await document.close() }
            #expect(document.documentState == .savingError)
            #expect(isRegistered(document))
            #expect(document.hasUnsavedChanges)
            #expect(text(at: url) == "before")
            #expect(listing(folder) == ["note.txt"])
            try await document.close()
            #expect(text(at: url) == "after")
            #expect(recorder.recorded == [.normal, .savingError, .normal, .closed])
        }
    }

    @Test("reopening after close works and starts clean")
    func reopen() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("one", at: url)
            let document = NoteDocument(fileURL: url)
            try await document.open()
            try await document.close()
            try put("two", at: url)
            try await document.open()
            #expect(document.text == "two")
            #expect(!document.hasUnsavedChanges)
            #expect(isRegistered(document))
            try await document.close()
        }
    }

    // MARK: Revert

    @Test("revert discards unsaved changes: editingDisabled during the reload, undo stack emptied")
    func revert() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("disk 1", at: url)
            let document = NoteDocument(fileURL: url)
            try await document.open()
            let recorder = StateRecorder(document)
            document.edit("local edit")
            #expect(document.hasUnsavedChanges)
            try put("disk 2", at: url)  // uncoordinated: the document is not told
            try await document.revert(toContentsOf: url)
            #expect(document.text == "disk 2")
            #expect(!document.hasUnsavedChanges)
            #expect(!document.undoManager.canUndo)
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.editingDisabled, .normal])
            #expect(document.hookCalls.withLock { $0 } == ["load", "disable", "load", "enable"])
            #expect(document.hooksOnDocumentQueue.withLock { $0 })
            try await document.close()
        }
    }

    @Test("a failed revert keeps the old contents, unsaved changes and state, and throws")
    func revertFails() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("disk 1", at: url)
            let document = NoteDocument(fileURL: url)
            try await document.open()
            let recorder = StateRecorder(document)
            document.edit("local edit")
            try put("REJECT this", at: url)
            await #expect(throws: DocumentError.self) { try await document.revert(toContentsOf: url) }
            #expect(document.text == "local edit")
            #expect(document.hasUnsavedChanges)
            #expect(document.undoManager.canUndo)
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.editingDisabled, .normal])
            #expect(text(at: url) == "REJECT this")

            let missing = folder.appendingPathComponent("missing.txt")
            await #expect(throws: DocumentError.self) { try await document.revert(toContentsOf: missing) }
            #expect(document.fileURL == url)
            #expect(document.text == "local edit")

            let closed = NoteDocument(fileURL: url)
            do {
                try await closed.revert(toContentsOf: url)
                Issue.record("revert of a closed document succeeded")
            } catch let error as DocumentError {
                guard case .documentClosed = error else { Issue.record("got \(error)"); return }
            }
        }
    }

    @Test("revert to another URL reads it and makes it the document's URL and registration")
    func revertToOtherURL() async throws {
        try await withDocumentFolder { folder in
            let first = folder.appendingPathComponent("first.txt")
            let second = folder.appendingPathComponent("second.txt")
            try put("one", at: first)
            try put("two", at: second)
            let document = NoteDocument(fileURL: first)
            try await document.open()
            try await document.revert(toContentsOf: second)
            #expect(document.fileURL == second)
            #expect(document.text == "two")
            #expect(isRegistered(document))
            document.edit("two, edited")
            try await document.close()
            #expect(text(at: second) == "two, edited")
            #expect(text(at: first) == "one")
        }
    }

    @Test("a package document: open reads the folder as a FilePackage, save replaces it whole")
    func packageDocument() async throws {
        final class PackageDocument: CloudDocument, @unchecked Sendable {
            let package = Locked(FilePackage())
            override func contents(forType typeName: String) throws -> DocumentContents {
                .package(package.withLock { $0 })
            }
            override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
                guard let loaded = contents.package else { throw DocumentError.contentsInvalid("not a package") }
                package.withLock { $0 = loaded }
            }
        }
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("Album.bundle", isDirectory: true)
            try FileManager.default.createDirectory(at: url.appendingPathComponent("images"), withIntermediateDirectories: true)
            try put("{\"title\":\"Album\"}", at: url.appendingPathComponent("index.json"))
            try put("pixels", at: url.appendingPathComponent("images/1.raw"))
            let document = PackageDocument(fileURL: url)
            try await document.open()
            let loaded = document.package.withLock { $0 }
            #expect(loaded.names == ["images", "index.json"])
            #expect(loaded["index.json"] == .file(Data("{\"title\":\"Album\"}".utf8)))
            try document.package.withLock { package in
                try package.setFile(Data("{\"title\":\"Renamed\"}".utf8), named: "index.json")
                _ = package.removeEntry(named: "images")
            }
            document.updateChangeCount(.done)
            try await document.close()
            #expect(listing(url) == ["index.json"])
            #expect(text(at: url.appendingPathComponent("index.json")) == "{\"title\":\"Renamed\"}")
            #expect(listing(folder) == ["Album.bundle"], "no temporary package left")
        }
    }

    // MARK: Progress

    @Test("large files publish a Progress in bytes while loading and saving (threshold lowered to 1 KiB)")
    func progressAvailable() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("big.txt")
            let content = String(repeating: "0123456789abcdef", count: 256)  // 4 KiB
            try put(content, at: url)
            let document = NoteDocument(fileURL: url)
            document.progressThreshold = 1024
            let seen = Locked<[(DocumentState, Int64?)]>([])
            let token = NotificationCenter.default.addObserver(
                forName: CloudDocument.stateChangedNotification, object: document, queue: nil
            ) { [document] note in
                let state = note.userInfo?[CloudDocument.stateUserInfoKey] as? DocumentState ?? .normal
                seen.withLock { $0.append((state, document.progress?.totalUnitCount)) }
            }
            defer { NotificationCenter.default.removeObserver(token) }

            try await document.open()
            #expect(document.text == content)
            #expect(document.progress == nil)
            document.text += "!"
            document.updateChangeCount(.done)
            try await document.save(to: url, for: .forOverwriting)
            #expect(document.progress == nil)
            let states = seen.withLock { $0 }
            #expect(states.map(\.0) == [[.closed, .progressAvailable], .normal, .progressAvailable, .normal])
            #expect(states.map(\.1) == [4096, nil, 4097, nil])
            try await document.close()
        }
    }

    @Test("the progress's completed count reaches the byte count")
    func progressCompletes() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("big.txt")
            let document = NoteDocument(fileURL: url)
            document.progressThreshold = 1
            document.text = String(repeating: "z", count: 3 * SafeSave.chunkSize + 5)
            let published = Locked<Progress?>(nil)
            let token = NotificationCenter.default.addObserver(
                forName: CloudDocument.stateChangedNotification, object: document, queue: nil
            ) { [document] _ in
                if let progress = document.progress { published.withLock { $0 = progress } }
            }
            defer { NotificationCenter.default.removeObserver(token) }
            try await document.save(to: url, for: .forCreating)
            await drainDocumentQueue(document)
            let progress = try #require(published.withLock { $0 })
            let counts = await withCheckedContinuation { continuation in
                document.presentedItemOperationQueue.addOperation {
                    continuation.resume(returning: [progress.totalUnitCount, progress.completedUnitCount])
                }
            }
            #expect(counts == [Int64(3 * SafeSave.chunkSize + 5), Int64(3 * SafeSave.chunkSize + 5)])
            try await document.close()
        }
    }

    // MARK: Announcements

    @Test("each stateChanges stream gets the changes made after it was created, in order")
    func streamsStartWhenCreated() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("x", at: url)
            let document = NoteDocument(fileURL: url)
            var early = StateStream(document)
            try await document.open()
            var late = StateStream(document)
            try await document.close()
            #expect(await early.next(2) == [.normal, .closed])
            #expect(await late.next(1) == [.closed])
        }
    }

    // MARK: Completion handlers

    @Test("completion-handler forms report success on the given queue, or on the document's callback queue")
    func completionHandlers() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("x", at: url)
            let document = NoteDocument(fileURL: url)
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let opened = await withCheckedContinuation { continuation in
                document.open(queue: queue) { ok in
                    continuation.resume(returning: (ok, OperationQueue.current === queue))
                }
            }
            #expect(opened.0)
            #expect(opened.1, "on the queue given")

            document.edit("y")
            SafeSave.injectFailure(at: .fsync, errno: EIO, forTarget: url)
            let saved = await withCheckedContinuation { continuation in
                document.save(to: url, for: .forOverwriting) { ok in
                    let current = OperationQueue.current
                    continuation.resume(returning: (ok, current != nil && current !== document.presentedItemOperationQueue))
                }
            }
            #expect(saved.0 == false)
            #expect(saved.1, "on the document's callback queue")
            #expect(document.lastError is DocumentError)
            #expect(document.documentState == .savingError)

            let autosaved = await withCheckedContinuation { continuation in
                document.autosave { continuation.resume(returning: $0) }
            }
            #expect(autosaved)
            #expect(text(at: url) == "y")

            try put("z", at: url)
            let reverted = await withCheckedContinuation { continuation in
                document.revert(toContentsOf: url) { continuation.resume(returning: $0) }
            }
            #expect(reverted)
            #expect(document.text == "z")

            let closed = await withCheckedContinuation { continuation in
                document.close { continuation.resume(returning: $0) }
            }
            #expect(closed)
            #expect(document.documentState == .closed)
        }
    }
}
