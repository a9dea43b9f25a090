import Foundation

extension SafeSave {
    /// Saves a document snapshot: ``DocumentContents/data(_:)`` with
    /// ``write(_:to:creating:progress:)``, ``DocumentContents/package(_:)`` with
    /// ``writePackage(_:to:creating:progress:)``; `creating` is `operation == .forCreating`.
    ///
    /// - Throws: What the chosen function throws (a ``DocumentError``); the original is then
    ///   untouched, as described there.
    ///
    /// Threading: synchronous and blocking; any thread.
    public static func write(_ contents: DocumentContents, to url: URL, for operation: SaveOperation,
                             progress: ((Int64) -> Void)? = nil) throws(DocumentError) {
        let creating = operation == .forCreating
        switch contents {
        case .data(let data): try write(data, to: url, creating: creating, progress: progress)
        case .package(let package): try writePackage(package, to: url, creating: creating, progress: progress)
        }
    }
}
