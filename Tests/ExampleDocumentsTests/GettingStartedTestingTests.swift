// Docs/GettingStarted.md, section 11 ("Unit-test your document class"), compiled and run as
// written, against the example TextDocument. Keep the two in step: only the import and the suite's
// name differ (each marked).
import Foundation
import Testing
@testable import ExampleDocuments   // the guide: `MyApp`, the target that holds TextDocument

@MainActor   // where app code uses its documents
@Suite struct GettingStartedTestingTests {   // the guide: TextDocumentTests
    /// A fresh folder for one test, removed afterwards.
    func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("notes-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    @Test func savesReopensAndUndoes() async throws {
        try await withFolder { folder in
            let url = folder.appendingPathComponent("notes.txt")
            let document = TextDocument(fileURL: url)
            document.text = "First line\n"
            try await document.saveThrowing(to: url, for: .forCreating)
            try await document.closeThrowing()
            #expect(try String(contentsOf: url, encoding: .utf8) == "First line\n")

            let reopened = TextDocument(fileURL: url)
            try await reopened.openThrowing()
            #expect(reopened.text == "First line\n")
            reopened.text += "Second line\n"
            #expect(reopened.hasUnsavedChanges)
            reopened.undoManager.undo()
            #expect(!reopened.hasUnsavedChanges)
            try await reopened.closeThrowing()
        }
    }

    @Test func refusesBytesThatAreNotText() async throws {
        try await withFolder { folder in
            let url = folder.appendingPathComponent("binary.txt")
            try Data([0x66, 0xFF, 0x6F]).write(to: url)
            let document = TextDocument(fileURL: url)
            await #expect {
                try await document.openThrowing()
            } throws: { error in
                guard case DocumentError.couldNotLoad(_, let underlying) = error,
                      case DocumentError.contentsInvalid = underlying else { return false }
                return true
            }
            #expect(document.documentState.contains(.closed))
            #expect(try Data(contentsOf: url) == Data([0x66, 0xFF, 0x6F]))   // left alone
        }
    }

    @Test func theHooksRoundTrip() throws {
        let document = TextDocument(fileURL: URL(fileURLWithPath: "/nonexistent/notes.txt"))
        try document.load(fromContents: .data(Data("héllo\r\n".utf8)), ofType: "public.plain-text")
        #expect(document.text == "héllo\r\n")
        #expect(try document.contents(forType: "public.plain-text").data == Data("héllo\r\n".utf8))
    }
}
