import Foundation
import Testing
import TestSupport
@testable import ExampleDocuments

/// Writes `bytes` as the file `name` in `folder` and opens a TextDocument on it.
private func openTextFile(_ name: String, holding bytes: Data, in folder: URL) async throws -> (URL, TextDocument) {
    let url = folder.appendingPathComponent(name)
    try bytes.write(to: url)
    let document = TextDocument(fileURL: url)
    try await document.openThrowing()
    return (url, document)
}

@Suite("TextDocument: UTF-8 text, line endings, BOM, undo", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct TextDocumentTests {
    @Test("a new document saved for creating writes UTF-8; opening it again reads the same text")
    func roundTrip() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("greeting.txt")
            let text = "héllo, wörld 🌍\nsecond line\n"
            let document = TextDocument(fileURL: url)
            document.text = text
            try await document.saveThrowing(to: url, for: .forCreating)
            #expect(try Data(contentsOf: url) == Data(text.utf8))
            #expect(document.documentState == .normal)
            try await document.closeThrowing()

            try await withReopened(TextDocument.init(fileURL:), at: url) { reopened in
                #expect(reopened.text == text)
                #expect(!reopened.hasByteOrderMark)
                #expect(!reopened.hasUnsavedChanges)
            }
        }
    }

    @Test("line endings are kept byte for byte: CRLF stays CRLF, mixed endings stay mixed")
    func lineEndings() async throws {
        try await Scratch.with { folder in
            let original = Data("first\r\nsecond\r\nunix\nold mac\rlast".utf8)
            let (url, document) = try await openTextFile("windows.txt", holding: original, in: folder)
            #expect(document.text == "first\r\nsecond\r\nunix\nold mac\rlast")
            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(try Data(contentsOf: url) == original, "an unedited save writes the same bytes")
            document.append("\r\nadded")
            try await document.closeThrowing()
            #expect(try Data(contentsOf: url) == original + Data("\r\nadded".utf8))
        }
    }

    @Test("a leading UTF-8 byte-order mark is not part of the text and is written back")
    func byteOrderMark() async throws {
        try await Scratch.with { folder in
            let marked = Data([0xEF, 0xBB, 0xBF] + Array("with mark".utf8))
            let (url, document) = try await openTextFile("bom.txt", holding: marked, in: folder)
            #expect(document.text == "with mark")
            #expect(document.hasByteOrderMark)
            document.text = "still with mark"
            try await document.closeThrowing()
            #expect(try Data(contentsOf: url) == Data([0xEF, 0xBB, 0xBF] + Array("still with mark".utf8)))
        }
    }

    @Test("invalid UTF-8 is rejected with a clear message, the document stays closed and the file untouched")
    func invalidUTF8() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("latin1.txt")
            let bytes = Data([0x63, 0x61, 0x66, 0xE9, 0x20, 0x6F, 0x6B])  // "café ok" in Latin-1
            try bytes.write(to: url)
            let document = TextDocument(fileURL: url)
            let refusal = await expectContentsInvalid(opening: document)
            #expect(refusal?.file == url)
            #expect(refusal?.why.contains("is not valid UTF-8 text") == true)
            #expect(refusal?.why.contains("0xE9 at offset 3") == true)
            #expect(refusal?.error.localizedDescription.contains("latin1.txt") == true)
            #expect(document.documentState == .closed)
            #expect(try Data(contentsOf: url) == bytes)
            #expect(!Coordinator.filePresenters.contains { $0 === document })
        }
    }

    @Test("a folder is not a text file")
    func folderRejected() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("notes.txt", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            let document = TextDocument(fileURL: url)
            await #expect(throws: DocumentError.self) { try await document.openThrowing() }
            #expect(document.documentState == .closed)
        }
    }

    @Test("setting text, append and replace are undoable and drive the change count")
    func undoRedo() async throws {
        try await Scratch.with { folder in
            let (url, document) = try await openTextFile("undo.txt", holding: Data("one two one".utf8), in: folder)
            let undo = document.undoManager

            document.text = "one two one"  // the same text: no change
            #expect(!undo.canUndo)
            #expect(!document.hasUnsavedChanges)

            #expect(document.replace("one", with: "1") == 2)
            #expect(document.text == "1 two 1")
            #expect(undo.undoActionName == "Replace")
            document.append("!")
            #expect(document.text == "1 two 1!")
            #expect(undo.undoActionName == "Append")
            document.text = "typed"
            #expect(undo.undoActionName == "Typing")
            #expect(document.hasUnsavedChanges)

            undo.undo()
            #expect(document.text == "1 two 1!")
            undo.undo()
            #expect(document.text == "1 two 1")
            undo.undo()
            #expect(document.text == "one two one")
            #expect(!document.hasUnsavedChanges, "back at the saved text")
            undo.redo()
            #expect(document.text == "1 two 1")
            #expect(undo.undoActionName == "Replace")
            #expect(document.hasUnsavedChanges)

            #expect(document.replace("", with: "x") == 0)
            #expect(document.replace("absent", with: "x") == 0)
            #expect(document.text == "1 two 1")
            try await document.closeThrowing()
            #expect(try String(contentsOf: url, encoding: .utf8) == "1 two 1")
        }
    }

    @Test("replace works on UTF-8 bytes: \\n matches inside \\r\\n, multi-byte characters are matched whole")
    func replaceSemantics() {
        #expect(TextDocument.replacing("\n", with: "|", in: "a\r\nb\nc").0 == "a\r|b|c")
        #expect(TextDocument.replacing("é", with: "e", in: "été").0 == "ete")
        #expect(TextDocument.replacing("aa", with: "b", in: "aaaaa") == ("bba", 2))
        #expect(TextDocument.replacing("🌍", with: "world", in: "hello 🌍").1 == 1)
    }
}
