import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

@Suite("CloudDocument: change counting, undo, saves in flight, autosave, serialization", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct DocumentChangeTrackingTests {
    // MARK: Counting

    @Test("updateChangeCount: done/redone add, undone removes, cleared marks saved")
    func counting() {
        let document = NoteDocument(fileURL: URL(fileURLWithPath: "/tmp/x.txt"))
        #expect(!document.hasUnsavedChanges)
        document.updateChangeCount(.done)
        document.updateChangeCount(.done)
        #expect(document.hasUnsavedChanges)
        #expect(document.changeCount == 2)
        document.updateChangeCount(.undone)
        #expect(document.changeCount == 1)
        document.updateChangeCount(.undone)
        #expect(!document.hasUnsavedChanges)
        #expect(document.changeCount == 0)
        document.updateChangeCount(.undone)
        #expect(document.hasUnsavedChanges, "undoing past the saved version is a change")
        #expect(document.changeCount == -1)
        document.updateChangeCount(.redone)
        #expect(!document.hasUnsavedChanges)
        document.updateChangeCount(.done)
        document.updateChangeCount(.cleared)
        #expect(!document.hasUnsavedChanges)
        #expect(document.changeCount == 0)
    }

    @Test("the undo manager drives the change count: undo back to the saved version is clean, a different change after undo is dirty")
    func undoDrivesCount() async throws {
        try await withOpenNote(containing: "a") { _, url, document in
            document.edit("ab")
            #expect(document.hasUnsavedChanges)
            document.undoManager.undo()
            #expect(document.text == "a")
            #expect(!document.hasUnsavedChanges)
            document.undoManager.redo()
            #expect(document.text == "ab")
            #expect(document.hasUnsavedChanges)
            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(!document.hasUnsavedChanges)
            document.undoManager.undo()
            #expect(document.text == "a")
            #expect(document.hasUnsavedChanges, "the saved file says ab")
            document.edit("ac")
            #expect(document.hasUnsavedChanges, "a different change at the same depth is still unsaved")
            document.undoManager.undo()
            #expect(document.text == "a")
            #expect(document.hasUnsavedChanges)
            document.undoManager.removeAllActions()
            #expect(document.hasUnsavedChanges, "forgetting the undo history saves nothing: still unsaved")
            try await document.closeThrowing()
            #expect(try String(contentsOf: url, encoding: .utf8) == "a", "close saved the change")
        }
    }

    @Test("replacing the undo manager unhooks the old one and hooks the new one")
    func replaceUndoManager() {
        let document = NoteDocument(fileURL: URL(fileURLWithPath: "/tmp/x.txt"))
        let old = document.undoManager
        let replacement = DocumentUndoManager()
        document.undoManager = replacement
        #expect(document.undoManager === replacement)
        old.registerUndo(withTarget: document) { _ in }
        #expect(!document.hasUnsavedChanges)
        replacement.registerUndo(withTarget: document) { _ in }
        #expect(document.hasUnsavedChanges)
    }

    // MARK: Saves in flight

    @Test("a change made while a save is in flight keeps the document dirty afterwards")
    func changeDuringSave() async throws {
        try await withOpenNote(containing: "v1") { _, url, document in
            document.edit("v2")
            let gate = document.holdSaves()
            let save = Task { try await document.saveThrowing(to: url, for: .forOverwriting) }
            // The save is now inside contents(forType:), holding the snapshot "v2".
            try await gate.waitUntilEntered()
            document.edit("v3")
            document.stopHoldingSaves()
            gate.release.signal()
            try await save.value
            #expect(text(at: url) == "v2")
            #expect(document.hasUnsavedChanges, "v3 was made after the snapshot")
            try await document.saveThrowing(to: url, for: .forOverwriting)
            expectSaved(document, at: url, holding: "v3")
            try await document.closeThrowing()
        }
    }

    @Test("lifecycle operations run one at a time, in call order: save while saving, autosave and close behind a save")
    func serialized() async throws {
        try await withOpenNote(containing: "v1") { _, url, document in
            let recorder = StateRecorder(document)
            let (events, sink) = AsyncStream.makeStream(of: String.self)
            var iterator = events.makeAsyncIterator()
            document.edit("v2")
            let gate = document.holdSaves()
            // The completion-handler forms queue their operation before returning, so the call
            // order below is the queue order.
            await MainActor.run {
                document.save(to: url, for: .forOverwriting) { sink.yield("save 1 \($0)") }
            }
            try await gate.waitUntilEntered()
            document.stopHoldingSaves()
            document.edit("v3")
            await MainActor.run {
                document.save(to: url, for: .forOverwriting) { sink.yield("save 2 \($0)") }
                document.autosave { sink.yield("autosave \($0)") }
                document.close { sink.yield("close \($0)") }
            }
            #expect(document.calls("contents") == 1, "nothing else ran while save 1 was in flight")
            gate.release.signal()
            var order: [String] = []
            for _ in 0..<4 { if let event = await iterator.next() { order.append(event) } }
            #expect(order == ["save 1 true", "save 2 true", "autosave false", "close true"])
            #expect(document.calls("contents") == 2, "autosave and close found nothing left to save")
            #expect(text(at: url) == "v3")
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [.closed])
        }
    }

    // MARK: Autosave

    @Test("autosave() saves only when there are unsaved changes and says whether it saved")
    func autosaveCall() async throws {
        try await withNote(containing: "v1") { _, url, document in
            #expect(try await document.autosaveThrowing() == false, "closed")
            try await document.openThrowing()
            #expect(try await document.autosaveThrowing() == false, "clean")
            document.edit("v2")
            #expect(try await document.autosaveThrowing() == true)
            expectSaved(document, at: url, holding: "v2")
            try await document.closeThrowing()
        }
    }

    @Test("with autosaveInterval set, unsaved changes are saved periodically; a failed autosave is retried")
    func periodicAutosave() async throws {
        try await withNote(containing: "v1") { _, url, document in
            var outcomes = saveOutcomes(document).makeAsyncIterator()
            document.autosaveInterval = .milliseconds(50)
            try await document.openThrowing()
            document.edit("v2")
            #expect(await outcomes.next() == true)
            expectSaved(document, at: url, holding: "v2")

            // A failing autosave: handleError without user interaction, savingError, then a
            // later period succeeds and clears it.
            var stream = StateStream(document)
            SafeSave.injectFailure(at: .write, errno: ENOSPC, forTarget: url)
            document.edit("v3")
            #expect(await outcomes.next() == false)
            #expect(await outcomes.next() == true)
            #expect(await stream.next(2) == [.savingError, .normal])
            #expect(text(at: url) == "v3")
            let handled = document.handledErrors.withLock { $0 }
            #expect(handled.count == 1)
            #expect(handled.first?.1 == false, "autosave does not permit user interaction")
            expectCase("diskFull", of: handled.first?.0)
            try await document.closeThrowing()
        }
    }

    @Test("autosave stops when the document closes and when the interval is cleared")
    func autosaveStops() async throws {
        try await withNote(containing: "v1") { _, _, document in
            document.autosaveInterval = .milliseconds(20)
            try await document.openThrowing()
            #expect(document.storage.withLock { $0.autosaveTask != nil })
            document.autosaveInterval = nil
            #expect(document.storage.withLock { $0.autosaveTask == nil })
            document.autosaveInterval = .milliseconds(20)
            try await document.closeThrowing()
            #expect(document.storage.withLock { $0.autosaveTask == nil })
        }
    }
}
