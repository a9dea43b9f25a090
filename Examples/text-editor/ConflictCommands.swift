import ExampleDocuments
import Foundation

/// `conflicts` and `resolve`: the unresolved conflict versions of a file, through `FileVersion`.
enum ConflictCommands {
    /// `conflicts <file>`: one line per unresolved conflict version — number, date, saving
    /// computer (when known), size and the first line where it differs from the current file.
    static func list(_ url: URL) throws {
        try FolderRefusal.check(url)
        let versions: [FileVersion]
        do throws(FileVersionError) {
            guard FileManager.default.fileExists(atPath: url.path) else { throw .itemNotFound(url) }
            versions = try ConflictVersions.list(url)
        } catch {
            throw VersionFailure(error: error)
        }
        print(ConflictVersions.listing(versions, of: url) { ConflictVersions.textDifference(of: $0.url, from: url) }, terminator: "")
    }

    /// `resolve <file> --keep current|N`.
    static func resolve(_ url: URL, keep: ConflictVersions.Keep) throws {
        try FolderRefusal.check(url)
        let resolution: ConflictVersions.Resolution
        do {
            guard FileManager.default.fileExists(atPath: url.path) else { throw FileVersionError.itemNotFound(url) }
            resolution = try ConflictVersions.resolve(url, keeping: keep)
        } catch let error as FileVersionError {
            throw VersionFailure(error: error)
        }
        print(ConflictVersions.report(resolution, keeping: keep, of: url))
    }
}

/// A `FileVersionError` with its description as the message the tool prints.
struct VersionFailure: LocalizedError {
    let error: FileVersionError
    var failureReason: String? { error.description }
    var errorDescription: String? { error.description }
}
