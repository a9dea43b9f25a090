import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

@Suite("CloudDocument as the presenter of its file", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct DocumentPresenterTests {
    @Test("another coordinator writes the file → the clean document reloads it (editingDisabled meanwhile)")
    func reloadsAfterCoordinatedWrite() async throws {
        try await withOpenNote(containing: "mine") { _, url, document in
            let before = try #require(document.fileModificationDate)
            let recorder = StateRecorder(document)
            var stream = StateStream(document)
            try await coordinatedPut("theirs, longer", at: url)
            #expect(await stream.until { $0 == .normal } == [.editingDisabled, .normal])
            #expect(document.text == "theirs, longer")
            #expect(!document.hasUnsavedChanges)
            #expect(try #require(document.fileModificationDate) >= before)
            #expect(recorder.recorded == [.editingDisabled, .normal])
            #expect(document.calls("load") == 2)
            #expect(document.calls("disable") == 1)
            #expect(document.calls("enable") == 1)
            #expect(document.hooksOnMainActor.withLock { $0 })
            try await document.closeThrowing()
        }
    }

    @Test("another coordinator writes while the document has unsaved changes → the changes are kept")
    func keepsUnsavedChanges() async throws {
        try await withOpenNote(containing: "original") { _, url, document in
            document.edit("my unsaved edit")
            var stream = StateStream(document)
            // .forMerging would ask us to save first; a plain write does not.
            try await coordinatedPut("theirs", at: url)
            #expect(await stream.until { $0 == .normal } == [.editingDisabled, .normal])
            await drainDocumentQueue(document)
            #expect(document.text == "my unsaved edit")
            #expect(document.hasUnsavedChanges)
            #expect(document.calls("load") == 1)
            #expect(text(at: url) == "theirs")
        }
    }

    @Test("a coordinated read makes the dirty document save first: the reader sees the new text")
    func saveBeforeReader() async throws {
        try await withOpenNote(containing: "old") { _, url, document in
            let recorder = StateRecorder(document)
            document.edit("new, unsaved")
            let seen = try await coordinatedText(at: url)
            #expect(seen == "new, unsaved")
            #expect(!document.hasUnsavedChanges)
            #expect(recorder.recorded == [])
            // A clean document is not asked to write anything.
            let again = try await coordinatedText(at: url)
            #expect(again == "new, unsaved")
            #expect(document.calls("contents") == 1)
            try await document.closeThrowing()
        }
    }

    @Test("when the save a reader asked for fails, the reader fails too (no stale read) and the document shows savingError")
    func failedSaveForReader() async throws {
        try await withOpenNote(containing: "old") { _, url, document in
            document.edit("new")
            SafeSave.injectFailure(at: .write, errno: ENOSPC, forTarget: url)
            await #expect(throws: CoordinationError.self) { try await coordinatedText(at: url) }
            #expect(document.documentState == .savingError)
            #expect(document.hasUnsavedChanges)
            #expect(text(at: url) == "old")
            #expect(document.handledErrors.withLock { $0.map(\.1) } == [false])
            try await document.closeThrowing()
            #expect(text(at: url) == "new")
        }
    }

    @Test("a coordinated delete closes the document without saving")
    func deletionCloses() async throws {
        try await withNote(containing: "doomed") { _, url, document in
            document.autosaveInterval = .seconds(60)
            try await document.openThrowing()
            document.edit("unsaved, lost with the file")
            var stream = StateStream(document)
            try await onBackgroundThread {
                try Coordinator().coordinate(writingItemAt: url, options: .forDeleting) { url in
                    try FileManager.default.removeItem(at: url)
                }
            }
            // Relinquished to the deleting writer first, then closed (the reacquirer that
            // follows belongs to the closed session and changes nothing).
            #expect(await stream.next(2) == [.editingDisabled, .closed])
            #expect(document.calls("disable") == 1)
            #expect(document.calls("enable") == 1, "closing re-enables editing so the calls pair up")
            #expect(document.documentState == .closed)
            #expect(!isRegistered(document))
            #expect(!FileManager.default.fileExists(atPath: url.path))
            #expect(document.storage.withLock { $0.autosaveTask == nil })
            try await document.closeThrowing()  // nothing to do
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test("a coordinated move (item(at:didMoveTo:)) updates fileURL; the next save goes to the new place")
    func moveFollows() async throws {
        try await withOpenNote(named: "before.txt", containing: "content") { folder, source, document in
            let destination = folder.appendingPathComponent("after.txt")
            try await coordinatedMove(source, to: destination)
            await drainDocumentQueue(document)
            #expect(document.fileURL == destination)
            #expect(document.localizedName == "after")
            document.edit("edited after the move")
            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            #expect(text(at: destination) == "edited after the move")
            #expect(!FileManager.default.fileExists(atPath: source.path))
            try await document.closeThrowing()
        }
    }

    @Test("relinquishing to a writer: the writer goes on at once; editingDisabled and disableEditing() follow on the main actor, cleared after")
    func relinquishToWriter() async throws {
        try await withOpenNote(containing: "same") { _, url, document in
            let recorder = StateRecorder(document)
            try await onBackgroundThread {
                // The writer touches nothing, so there is no reload afterwards.
                try Coordinator().coordinate(writingItemAt: url) { _ in }
            }
            await drainDocumentQueue(document)
            #expect(document.documentState == .normal)
            #expect(document.hookCalls.withLock { $0.filter { $0 == "disable" || $0 == "enable" } } == ["disable", "enable"])
            #expect(document.calls("load") == 1, "the file did not change: no reload")
            #expect(recorder.recorded == [.editingDisabled, .normal])
            try await document.closeThrowing()
        }
    }

    @Test("two documents on one file: one saves, the other reloads; the saver is not told about its own save")
    func twoDocuments() async throws {
        try await withOpenNote(named: "shared.txt", containing: "start") { _, url, first in
            let second = NoteDocument(fileURL: url)
            try await second.openThrowing()
            let firstRecorder = StateRecorder(first)
            var secondStream = StateStream(second)
            first.edit("from the first")
            try await first.saveThrowing(to: url, for: .forOverwriting)
            #expect(await secondStream.until { $0 == .normal } == [.editingDisabled, .normal])
            #expect(second.text == "from the first")
            await drainDocumentQueue(first)
            #expect(firstRecorder.recorded == [])
            #expect(first.calls("load") == 1)
            try await first.closeThrowing()
            try await second.closeThrowing()
        }
    }

    @Test("presentedItemDidChange for the document's own save (an echo) is ignored")
    func ownSaveEchoIgnored() async throws {
        try await withOpenNote(containing: "v1") { _, url, document in
            document.edit("v2")
            try await document.saveThrowing(to: url, for: .forOverwriting)
            let recorder = StateRecorder(document)
            // What a relay of another process's notice of our own write would deliver.
            document.presentedItemOperationQueue.addOperation { document.presentedItemDidChange() }
            await drainDocumentQueue(document)
            try await document.autosaveThrowing()  // a lifecycle barrier: any reload would have run first
            #expect(recorder.recorded == [])
            #expect(document.calls("load") == 1)
            #expect(document.text == "v2")
            try await document.closeThrowing()
        }
    }
}
