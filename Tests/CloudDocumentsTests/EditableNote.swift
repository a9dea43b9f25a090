import Foundation
@testable import CloudDocuments

/// A plain text note for tests that need to step into one part of a save or an open (subclasses
/// override that hook and call `super`): `edit` changes the text and counts it as a change.
class EditableNote: CloudDocument {
    var text = ""

    func edit(_ newText: String) {
        text = newText
        updateChangeCount(.done)
    }

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(Data(text.utf8))
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }
}

/// Runs `body` with a note made by `make`, open on `note.txt` ("v1") in a fresh folder, with a
/// private version store; closes it afterwards (whatever state `body` left it in).
@MainActor
func withOpenNote<Note: EditableNote>(_ make: (URL) -> Note,
                                      _ body: (_ folder: URL, _ url: URL, _ document: Note) async throws -> Void) async throws {
    try await withPrivateVersionStore {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("v1", at: url)
            let document = make(url)
            try await document.openThrowing()
            try await body(folder, url, document)
            try? await document.closeThrowing()
        }
    }
}
