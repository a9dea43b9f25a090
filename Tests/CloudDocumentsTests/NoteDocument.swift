import Foundation
import SystemSupport
import Testing
@testable import CloudDocuments

/// A UTF-8 note whose hooks record what happens to them. `load` rejects contents starting with
/// "REJECT". The write step can be made to wait on a gate, to hold a save in the middle (after its
/// snapshot was taken on the main actor, while its bytes are being written off it).
///
/// Its state is deliberately `nonisolated` behind locks, so that tests can drive it from any
/// context while a save is held; `PlainNote` (PlainNoteTests.swift) is the plain-property kind.
final class NoteDocument: CloudDocument {
    struct LoadRejected: Error, Equatable {}

    private let body = Locked("")
    /// Names of hook calls, in order: "contents", "load", "disable", "enable", "error".
    let hookCalls = Locked<[String]>([])
    /// Whether every hook call ran on the main actor (main thread).
    let hooksOnMainActor = Locked(true)
    /// Errors passed to handleError, with userInteractionPermitted.
    let handledErrors = Locked<[(any Error, Bool)]>([])
    /// When set, the write step signals `entered` and waits for `release` first.
    let gate = Locked<SaveGate?>(nil)

    nonisolated var text: String {
        get { body.withLock { $0 } }
        set { body.withLock { $0 = newValue } }
    }

    /// Sets the text and registers an undo action, like an editor would.
    nonisolated func edit(_ newText: String) {
        let old = body.withLock { text in
            let old = text
            text = newText
            return old
        }
        undoManager.registerUndo(withTarget: self) { document in document.edit(old) }
    }

    /// Sets the text and counts one change, without registering an undo action.
    nonisolated func replaceText(_ newText: String) {
        text = newText
        updateChangeCount(.done)
    }

    /// Makes saves stop in their write step until the returned gate is released.
    nonisolated func holdSaves() -> SaveGate {
        let held = SaveGate()
        gate.withLock { $0 = held }
        return held
    }

    /// Lets later saves run straight through again.
    nonisolated func stopHoldingSaves() { gate.withLock { $0 = nil } }

    private func record(_ call: String) {
        MainActor.assertIsolated()
        dispatchPrecondition(condition: .onQueue(.main))
        let onMain = MainQueueCheck.isMainQueue
        hooksOnMainActor.withLock { $0 = $0 && onMain }
        hookCalls.withLock { $0.append(call) }
    }

    nonisolated func calls(_ name: String) -> Int { hookCalls.withLock { $0.filter { $0 == name }.count } }

    override func contents(forType typeName: String) throws -> DocumentContents {
        record("contents")
        return .data(Data(text.utf8))
    }

    override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                safelyTo url: URL, for saveOperation: SaveOperation) throws {
        if let gate = gate.withLock({ $0 }) {
            gate.entered.signal()
            gate.release.wait()
        }
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
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

/// Two semaphores to hold a save inside its write step.
final class SaveGate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    /// Returns once a save has entered `contents(forType:)` (waiting on a thread of its own).
    func waitUntilEntered() async throws {
        try await onBackgroundThread { self.entered.wait() }
    }
}
