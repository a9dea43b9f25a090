import CloudDocuments
import ExampleDocuments
import Foundation

/// `conflicts` and `resolve`: the unresolved conflict versions of an image, through `FileVersion`
/// (ImageDocument keeps conflicts for the user to resolve).
enum ConflictCommands {
    /// `conflicts <file>`: one line per unresolved conflict version — number, date, saving
    /// computer, format and size of its contents.
    static func list(_ arguments: Arguments) throws {
        let url = fileURL(try arguments.positionals("file")[0])
        guard FileManager.default.fileExists(atPath: url.path) else { throw FileVersionError.itemNotFound(url) }
        let versions = try ConflictVersions.list(url)
        print(ConflictVersions.listing(versions, of: url) { summary(of: $0.url) }, terminator: "")
    }

    /// `resolve <file> --keep current|N`.
    static func resolve(_ arguments: Arguments) throws {
        let url = fileURL(try arguments.positionals("file")[0])
        guard let value = arguments.option("keep") else { throw UsageError("resolve needs --keep current or --keep N") }
        guard let keep = ConflictVersions.Keep(argument: value) else {
            throw UsageError("--keep must be “current” or a conflict version number from 1, not “\(value)”")
        }
        guard FileManager.default.fileExists(atPath: url.path) else { throw FileVersionError.itemNotFound(url) }
        let resolution = try ConflictVersions.resolve(url, keeping: keep)
        print(ConflictVersions.report(resolution, keeping: keep, of: url))
    }

    /// The format (from the magic number) and size of the image file at `url`.
    static func summary(of url: URL) -> String {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return "(contents unreadable)" }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 8)) ?? Data())
        let size = (try? handle.seekToEnd()).map { "\($0) bytes" } ?? "unknown size"
        let format: String
        switch head {
        case _ where head.starts(with: [0x89, 0x50, 0x4E, 0x47]): format = "PNG"
        case _ where head.starts(with: Array("P6".utf8)) || head.starts(with: Array("P3".utf8)): format = "PPM"
        case _ where head.starts(with: Array("P5".utf8)) || head.starts(with: Array("P2".utf8)): format = "PGM"
        default: format = "unknown format"
        }
        return "\(format), \(size)"
    }

    private static func fileURL(_ path: String) -> URL { URL(fileURLWithPath: path).standardizedFileURL }
}
