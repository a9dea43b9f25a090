import Foundation
import Testing
@testable import CloudDocuments

/// Expects `body` to throw the `DocumentError` case named `expected` (see `caseName`); records an
/// issue when it throws nothing, something else or another case. Returns the error, for checking
/// what it carries.
@discardableResult
func expectDocumentError<R>(_ expected: String, sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () throws -> R) -> DocumentError? {
    let error = #expect(throws: DocumentError.self, sourceLocation: sourceLocation) { _ = try body() }
    if let error { expectCase(expected, of: error, sourceLocation: sourceLocation) }
    return error
}

/// The same for async work.
@discardableResult
func expectDocumentError<R>(_ expected: String, sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () async throws -> R) async -> DocumentError? {
    let error = await #expect(throws: DocumentError.self, sourceLocation: sourceLocation) { _ = try await body() }
    if let error { expectCase(expected, of: error, sourceLocation: sourceLocation) }
    return error
}

/// Records an issue unless `error` is the `DocumentError` case named `expected`.
func expectCase(_ expected: String, of error: (any Error)?, sourceLocation: SourceLocation = #_sourceLocation) {
    if (error as? DocumentError)?.caseName != expected {
        Issue.record("expected \(expected), got \(String(describing: error))", sourceLocation: sourceLocation)
    }
}

extension DocumentError {
    /// The case's name, e.g. "diskFull".
    var caseName: String {
        switch self {
        case .fileNotFound: "fileNotFound"
        case .notReadable: "notReadable"
        case .couldNotLoad: "couldNotLoad"
        case .alreadyExists: "alreadyExists"
        case .saveFailed: "saveFailed"
        case .diskFull: "diskFull"
        case .folderMissing: "folderMissing"
        case .notWritable: "notWritable"
        case .documentClosed: "documentClosed"
        case .documentAlreadyOpen: "documentAlreadyOpen"
        case .editingDisabled: "editingDisabled"
        case .invalidPackageEntryName: "invalidPackageEntryName"
        case .unsupportedPackageEntry: "unsupportedPackageEntry"
        case .unsupportedFileType: "unsupportedFileType"
        case .contentsInvalid: "contentsInvalid"
        case .evictionRefused: "evictionRefused"
        }
    }

    /// The URL the case carries (the file, or for folderMissing the folder), if any.
    var url: URL? {
        switch self {
        case .fileNotFound(let url), .notReadable(let url, _, _), .couldNotLoad(let url, _), .alreadyExists(let url),
             .saveFailed(let url, _, _), .diskFull(let url, _), .folderMissing(let url), .notWritable(let url, _),
             .unsupportedPackageEntry(let url, _), .evictionRefused(let url):
            url
        case .documentClosed, .documentAlreadyOpen, .editingDisabled, .invalidPackageEntryName,
             .unsupportedFileType, .contentsInvalid:
            nil
        }
    }

    /// The text the case carries: notReadable's and saveFailed's reason, the entry name, the
    /// unsupported entry's kind or file type, what is wrong with the contents.
    var detail: String? {
        switch self {
        case .notReadable(_, let text, _), .saveFailed(_, let text, _), .invalidPackageEntryName(let text),
             .unsupportedPackageEntry(_, let text), .unsupportedFileType(let text), .contentsInvalid(let text):
            text
        case .fileNotFound, .couldNotLoad, .alreadyExists, .diskFull, .folderMissing, .notWritable,
             .documentClosed, .documentAlreadyOpen, .editingDisabled, .evictionRefused:
            nil
        }
    }

    /// saveFailed's system error number.
    var errorNumber: Errno? {
        if case .saveFailed(_, _, let code) = self { code } else { nil }
    }

    /// The error couldNotLoad wraps (the one the document's `load` threw).
    var underlying: (any Error)? {
        if case .couldNotLoad(_, let underlying) = self { underlying } else { nil }
    }
}
