import CloudDocuments
import Foundation

// The subclasses shown in README.md and Docs/GettingStarted.md, compiled here (Swift 6 mode,
// warnings visible in the build) so the documentation cannot drift into code that does not
// compile. Keep them in sync with the documents.

/// README.md, "A document in a few lines".
final class ReadmeNoteDocument: CloudDocument {
    var text = ""

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(Data(text.utf8))
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        text = String(decoding: contents.data ?? Data(), as: UTF8.self)
    }
}

/// Docs/GettingStarted.md, section 2.
final class GuideTextDocument: CloudDocument {
    var text = "" {
        didSet {
            guard text != oldValue else { return }
            undoManager.registerUndo(withTarget: self) { [oldValue] document in
                document.text = oldValue   // undo; registers the redo the same way
            }
        }
    }

    override func contents(forType typeName: String) throws -> DocumentContents {
        .data(Data(text.utf8))
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        guard let data = contents.data else {
            throw DocumentError.contentsInvalid("“\(fileURL.lastPathComponent)” is a folder, not a text file")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw DocumentError.contentsInvalid("“\(fileURL.lastPathComponent)” is not valid UTF-8")
        }
        undoManager.disableUndoRegistration()   // loading is not an edit
        self.text = text                        // parse first, then replace: all or nothing
        undoManager.enableUndoRegistration()
    }

    override func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        let who = userInteractionPermitted ? "you asked for" : "background work"
        print("\(localizedName): \(who) failed: \(error.localizedDescription)")
        super.handleError(error, userInteractionPermitted: userInteractionPermitted)
    }
}

/// Docs/GettingStarted.md, section 10.
final class GuideAlbumDocument: CloudDocument {
    var album = FilePackage()

    override func contents(forType typeName: String) throws -> DocumentContents {
        .package(album)
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        guard let package = contents.package else {
            throw DocumentError.contentsInvalid("“\(fileURL.lastPathComponent)” is a file, not an album folder")
        }
        album = package
    }

    func setCaption(_ caption: String) throws {
        try album.setFile(Data(caption.utf8), named: "caption.txt")
        updateChangeCount(.done)   // not undoable here, so count the change by hand
    }
}

/// README.md's usage lines and Docs/GettingStarted.md's sections 4–8, as a command-line tool
/// would run them (on the main actor).
@MainActor
func guideUsage(_ url: URL) async throws {
    let note = ReadmeNoteDocument(fileURL: url)
    try await note.saveThrowing(to: note.fileURL, for: .forCreating)
    note.text = "Hello"
    note.updateChangeCount(.done)
    let saved = await note.close()
    _ = saved

    let document = GuideTextDocument(fileURL: url)
    try await document.openThrowing()
    document.text += "Second line\n"
    document.undoManager.undo()
    document.undoManager.redo()
    document.autosaveInterval = .seconds(15)
    if await document.autosave() { print("saved") }
    document.open { success in print(success) }
    document.close(completionHandler: nil)
    try await document.closeThrowing()
}
