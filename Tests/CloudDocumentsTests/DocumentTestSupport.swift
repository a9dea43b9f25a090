import Foundation
import SystemSupport
import Testing
@testable import CloudDocuments

/// Records every `stateChangedNotification` of one document, and whether it arrived on the main thread.
final class StateRecorder: @unchecked Sendable {
    // @unchecked: `token` is written once in init and read in deinit; the log is Sendable.
    private final class Log: Sendable {
        let states = Locked<[DocumentState]>([])
        let allOnMainThread = Locked(true)
    }
    private let log = Log()
    private var token: (any NSObjectProtocol)?

    init(_ document: CloudDocument) {
        let log = self.log
        token = NotificationCenter.default.addObserver(
            forName: CloudDocument.stateChangedNotification, object: document, queue: nil
        ) { note in
            let state = note.userInfo?[CloudDocument.stateUserInfoKey] as? DocumentState
            let onQueue = MainQueueCheck.isMainQueue
            log.allOnMainThread.withLock { $0 = $0 && onQueue }
            log.states.withLock { $0.append(state ?? DocumentState(rawValue: 1 << 30)) }
        }
    }

    deinit {
        if let token { NotificationCenter.default.removeObserver(token) }
    }

    var recorded: [DocumentState] { log.states.withLock { $0 } }
    var postedOnMainThread: Bool { log.allOnMainThread.withLock { $0 } }
    func reset() { log.states.withLock { $0.removeAll() } }
}

/// Starts recording `document`'s state changes, then opens it: the record starts with the
/// open's `.normal`.
func openRecordingStates(_ document: CloudDocument) async throws -> StateRecorder {
    let recorder = StateRecorder(document)
    try await document.openThrowing()
    return recorder
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

/// Moves `source` to `destination` as an app does: one coordinated write on both (moving,
/// replacing), the move, then `item(at:didMoveTo:)` so presenters follow. Runs off the main actor.
func coordinatedMove(_ source: URL, to destination: URL) async throws {
    try await onBackgroundThread {
        let coordinator = Coordinator()
        try coordinator.coordinate(writingItemAt: source, options: .forMoving,
                                   writingItemAt: destination, options: .forReplacing) { from, to in
            try FileManager.default.moveItem(at: from, to: to)
            coordinator.item(at: from, didMoveTo: to)
        }
    }
}

/// Waits until the presenter queue has run everything queued on it so far, the conflict checks
/// those messages scheduled have run, and the main-actor work they queued has run and been
/// announced.
func drainDocumentQueue(_ document: CloudDocument) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        document.presentedItemOperationQueue.addOperation { continuation.resume() }
    }
    // A version message (`presentedItemDidResolveConflict`, say) schedules a conflict check on a
    // serial queue of its own (`scheduleConflictCheck`): wait for the checks queued so far.
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        CloudDocument.conflictCheckWork.async { continuation.resume() }
    }
    // Presenter messages hop to the main actor (main queue, FIFO): the first pass runs after the
    // work they queued there; the second after the announcements that work queued in turn.
    await MainActor.run {}
    await MainActor.run {}
}

/// The file's bytes, or nil.
func bytes(at url: URL) -> Data? { try? Data(contentsOf: url) }

/// Checks what a save leaves: the file at `url` holds `expected` and `document` has no unsaved
/// changes.
func expectSaved(_ document: CloudDocument, at url: URL, holding expected: String,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(text(at: url) == expected, sourceLocation: sourceLocation)
    #expect(!document.hasUnsavedChanges, sourceLocation: sourceLocation)
}

/// Whether `document` is currently a registered presenter.
func isRegistered(_ document: CloudDocument) -> Bool {
    Coordinator.filePresenters.contains { $0 === document }
}

/// A fresh temporary folder holding the file `name` with `contents` (no file when nil), and a
/// NoteDocument for that file, still closed. `body` gets the folder, the file and the document.
func withNote<Result>(
    named name: String = "note.txt", containing contents: String?, isolation: isolated (any Actor)? = #isolation,
    _ body: (_ folder: URL, _ url: URL, _ document: NoteDocument) async throws -> Result
) async throws -> Result {
    try await Scratch.with(isolation: isolation) { folder in
        let url = folder.appendingPathComponent(name)
        if let contents { try put(contents, at: url) }
        return try await body(folder, url, NoteDocument(fileURL: url))
    }
}

/// The same with the document opened before `body` runs.
func withOpenNote<Result>(
    named name: String = "note.txt", containing contents: String, isolation: isolated (any Actor)? = #isolation,
    _ body: (_ folder: URL, _ url: URL, _ document: NoteDocument) async throws -> Result
) async throws -> Result {
    try await withNote(named: name, containing: contents, isolation: isolation) { folder, url, document in
        try await document.openThrowing()
        return try await body(folder, url, document)
    }
}

/// Writes `text` to `url` through a coordinator of its own, as another part of the app would.
func coordinatedPut(_ text: String, at url: URL) async throws {
    try await onBackgroundThread {
        try Coordinator().coordinate(writingItemAt: url) { url in try put(text, at: url) }
    }
}

/// Reads the text at `url` through a coordinator of its own, as another part of the app would.
func coordinatedText(at url: URL) async throws -> String? {
    try await onBackgroundThread {
        try Coordinator().coordinate(readingItemAt: url) { url in text(at: url) }
    }
}

/// Registers a save observer and returns a stream of save outcomes.
func saveOutcomes(_ document: CloudDocument) -> AsyncStream<Bool> {
    let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
    document.saveObserver = { outcome in
        if case .success = outcome { continuation.yield(true) } else { continuation.yield(false) }
    }
    return stream
}
