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
