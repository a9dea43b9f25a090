import Foundation
import Testing
@testable import CloudDocuments

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

    /// Sets the text and counts one change, without registering an undo action.
    func replaceText(_ newText: String) {
        text = newText
        updateChangeCount(.done)
    }

    /// Makes saves stop inside `contents(forType:)` until the returned gate is released.
    func holdSaves() -> SaveGate {
        let held = SaveGate()
        gate.withLock { $0 = held }
        return held
    }

    /// Lets later saves run straight through again.
    func stopHoldingSaves() { gate.withLock { $0 = nil } }

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

    /// Returns once a save has entered `contents(forType:)` (waiting on a thread of its own).
    func waitUntilEntered() async throws {
        try await onBackgroundThread { self.entered.wait() }
    }
}
