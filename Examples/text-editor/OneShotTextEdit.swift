import ExampleDocuments
import Foundation

/// `append` and `replace`: a program that makes one change and exits changes the file inside one
/// coordinated write (``CoordinatedFileEdit``) instead of opening a document (a coordinated
/// read), editing it and closing it (a coordinated write). Between that read and that write
/// another process could write the file, and its change was merged at best, kept as a conflict
/// version, or lost (issue 15); here runs of the tool on one file apply one after another.
///
/// The bytes are read and written as ``TextDocument`` reads and writes them: UTF-8, the
/// byte-order mark kept, line endings untouched.
enum OneShotTextEdit {
    /// Changes the text of the file at `url` with `change` and writes it back, durably, when it
    /// changed (byte for byte); returns what `change` returns. A plain folder is refused before
    /// anything is read.
    ///
    /// - Throws: ``EditorFailure`` for a folder; ``DocumentError/couldNotLoad(_:underlying:)``
    ///   for text that is not UTF-8 (as opening a document does); what
    ///   ``CoordinatedFileEdit/edit(_:savingTo:coordinator:_:)`` throws. The file is then unchanged.
    ///
    /// Suspends the caller while other programs hold the file; `change` runs on another thread.
    static func edit<Result: Sendable>(_ url: URL, _ change: @escaping @Sendable (inout String) -> Result) async throws -> Result {
        try FolderRefusal.check(url)
        return try await CoordinatedFileEdit.edit(url) { contents in
            let file: (text: String, hasByteOrderMark: Bool)
            do {
                file = try TextDocument.decodeFile(contents, name: url.lastPathComponent)
            } catch {
                throw DocumentError.couldNotLoad(url, underlying: error)
            }
            var text = file.text
            let result = change(&text)
            guard !text.utf8.elementsEqual(file.text.utf8) else { return .init(newContents: nil, result: result) }
            return .init(newContents: TextDocument.encodeFile(text: text, byteOrderMark: file.hasByteOrderMark), result: result)
        }
    }
}
