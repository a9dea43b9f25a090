import Foundation

/// One ubiquity container: `ROOT/IDENTIFIER/`, with the user's documents in `Documents/` and the
/// app's other synced data beside it (the data scope).
public struct UbiquityContainer: Sendable, Hashable {
    /// The container identifier, for example `com.example.notes`.
    public let identifier: String
    /// The container folder, `ROOT/IDENTIFIER/`.
    public let url: URL

    /// The container `identifier` whose folder is `url` (nothing is checked or made on disk).
    public init(identifier: String, url: URL) {
        self.identifier = identifier
        self.url = url
    }

    /// The folder of user-visible documents (Apple's `NSMetadataQueryUbiquitousDocumentsScope`).
    public var documentsURL: URL { url.appending(path: "Documents", directoryHint: .isDirectory) }

    /// Whether `url` is inside this container's `Documents` folder (the documents scope) — the
    /// rest of the container is the data scope. Compares standardized paths, without touching disk.
    public func isInDocumentsScope(_ url: URL) -> Bool {
        Self.path(url.standardizedFileURL.path, isInside: documentsURL.standardizedFileURL.path)
    }

    /// Whether `url` is inside this container (either scope).
    public func contains(_ url: URL) -> Bool {
        Self.path(url.standardizedFileURL.path, isInside: self.url.standardizedFileURL.path)
    }

    static func path(_ path: String, isInside folder: String) -> Bool {
        let folder = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        return path == folder || path.hasPrefix(folder + "/")
    }
}
