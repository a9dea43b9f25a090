import CloudDocuments
import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// A plain-text document for the engine's tests.
final class SyncedNote: CloudDocument {
    var text = ""

    override func contents(forType typeName: String) throws -> DocumentContents { .data(Data(text.utf8)) }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }
}

@Suite("Sync engine: open documents", .serialized)
struct EngineDocumentTests {
    @Test("a dirty open document is saved before its upload: the server gets the unsaved edit")
    @MainActor func dirtyDocumentSavedFirst() async throws {
        let devices = try TwoDevices()
        try devices.write("on disk", "doc.txt", on: devices.a)
        let document = SyncedNote(fileURL: devices.url(devices.a, "doc.txt"))
        try await document.openThrowing()
        document.text = "typed, not saved"
        document.updateChangeCount(.done)
        await devices.sync(devices.a)
        // The upload's coordinated read made the document save first.
        #expect(devices.store.data(at: "doc.txt") == Data("typed, not saved".utf8))
        #expect(!document.hasUnsavedChanges)
        await devices.sync(devices.b)
        #expect(devices.read("doc.txt", on: devices.b) == "typed, not saved")
        // The save changed the file after its snapshot was recorded? Then the next pass uploads
        // the same bytes again at most; it never makes a conflict.
        await devices.sync(devices.a)
        #expect(try devices.conflictTexts("doc.txt", on: devices.a).isEmpty)
        try await document.closeThrowing()
    }

    @Test("a download while B's document has unsaved changes keeps B's edits")
    @MainActor func downloadKeepsDirtyEdits() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "doc.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        let document = SyncedNote(fileURL: devices.url(devices.b, "doc.txt"))
        try await document.openThrowing()
        document.text = "B typed this"
        document.updateChangeCount(.done)
        try devices.write("A wrote this", "doc.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        // The download is in place; the document kept its unsaved edit and is still open (a
        // download put in place "for replacing" counts as a deletion and would have closed it:
        // text and change count survive a close, so they alone do not show it).
        #expect(devices.read("doc.txt", on: devices.b) == "A wrote this")
        #expect(!document.documentState.contains(.closed))
        #expect(document.hasUnsavedChanges)
        #expect(document.text == "B typed this")
        // Its save keeps the downloaded bytes as a conflict version (the no-lost-update rule),
        // and the next passes carry B's text to the server and to A.
        try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
        #expect(try devices.conflictTexts("doc.txt", on: devices.b) == ["A wrote this"])
        await devices.sync(devices.b)
        await devices.sync(devices.a)
        #expect(devices.read("doc.txt", on: devices.a) == "B typed this")
        // The conflict version the document made on B reaches A too.
        #expect(try devices.conflictTexts("doc.txt", on: devices.a) == ["A wrote this"])
        try await document.closeThrowing()
    }
}
