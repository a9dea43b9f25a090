import CloudDocuments
import FileCoordination
import Foundation

/// How workers sort and describe the errors they meet.
enum ErrorClassification {
    /// `timeout` for a coordination that timed out (the library's own limits: the workers set
    /// none), `error` otherwise. Move races are decided by the caller, who knows what moved.
    static func kind(of error: any Error) -> ErrorKind {
        if case CoordinationError.timedOut = error { return .timeout }
        return .error
    }

    /// The message to report: the error's `localizedDescription`, with its type.
    static func message(_ error: any Error, during operation: String) -> String {
        "\(operation): \(error.localizedDescription) [\(type(of: error))]"
    }

    /// Whether `error` says a file or folder was not there (what a read or save of a document's
    /// old place meets after a mover moved the folder away) — also inside
    /// ``CoordinationError/presenterFailed(_:)``, where another process's document refused a read
    /// because its own save met the moved folder (its error arrives as an `NSError` with the
    /// domain and code of the ``DocumentError``).
    static func isNotFound(_ error: any Error) -> Bool {
        if case CoordinationError.presenterFailed(let underlying) = error { return isNotFound(underlying) }
        if case DocumentError.fileNotFound = error { return true }
        if case DocumentError.folderMissing = error { return true }
        // By domain and code (on Linux `as? CocoaError` also succeeds for other domains).
        let bridged = error as NSError
        return missingDocumentErrors.contains { $0.domain == bridged.domain && $0.code == bridged.code }
            || (bridged.domain == NSPOSIXErrorDomain && bridged.code == Int(ENOENT))
            || (bridged.domain == NSCocoaErrorDomain && (bridged.code == CocoaError.fileNoSuchFile.rawValue
                                                         || bridged.code == CocoaError.fileReadNoSuchFile.rawValue))
    }

    /// The bridged forms of the two "not there" document errors (their domain and code).
    private static let missingDocumentErrors: [NSError] = [
        DocumentError.fileNotFound(URL(fileURLWithPath: "/")) as NSError,
        DocumentError.folderMissing(URL(fileURLWithPath: "/")) as NSError,
    ]
}
