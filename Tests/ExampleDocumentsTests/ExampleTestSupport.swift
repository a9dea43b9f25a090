import Foundation
import Glibc
import Testing
@_exported import TestSupport
@testable import ExampleDocuments

/// Opens a fresh document (made by `make`) on the file at `url`, runs `body` with it, closes it.
@MainActor
func withReopened<Document: CloudDocument>(
    _ make: (URL) -> Document, at url: URL, _ body: (Document) throws -> Void
) async throws {
    let document = make(url)
    try await document.openThrowing()
    try body(document)
    try await document.closeThrowing()
}

/// Why opening a document was refused with couldNotLoad wrapping contentsInvalid.
struct ContentsRefusal {
    let error: DocumentError
    /// The file couldNotLoad names.
    let file: URL
    /// What contentsInvalid says.
    let why: String
}

/// Opens `document` expecting couldNotLoad wrapping contentsInvalid; records an issue (and returns
/// nil) when the open succeeds or fails otherwise.
@MainActor
func expectContentsInvalid(opening document: CloudDocument, _ comment: Comment? = nil,
                           sourceLocation: SourceLocation = #_sourceLocation) async -> ContentsRefusal? {
    let error = await #expect(throws: DocumentError.self, comment, sourceLocation: sourceLocation) {
        try await document.openThrowing()
    }
    guard let error else { return nil }
    guard case .couldNotLoad(let file, let underlying) = error,
          case .contentsInvalid(let why)? = underlying as? DocumentError else {
        Issue.record("\(comment.map { "\($0): " } ?? "")got \(error)", sourceLocation: sourceLocation)
        return nil
    }
    return ContentsRefusal(error: error, file: file, why: why)
}
