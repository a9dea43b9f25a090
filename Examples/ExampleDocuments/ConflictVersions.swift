import CloudDocuments
import Foundation

/// The unresolved conflict versions of a file, as the example tools (`text-editor conflicts` /
/// `resolve`, `image-tool conflicts` / `resolve`) list and resolve them — all through
/// ``FileVersion``. Versions are numbered from 1 in the order
/// ``FileVersion/unresolvedConflictVersionsOfItem(at:)`` returns them (oldest first).
public enum ConflictVersions {
    /// Which contents a resolution keeps.
    public enum Keep: Equatable, Sendable {
        /// The file as it is now.
        case current
        /// Conflict version number `n` (from 1, as listed).
        case version(Int)

        /// `current` or a number from 1; `nil` for anything else.
        public init?(argument: String) {
            if argument == "current" {
                self = .current
            } else if let number = Int(argument), number >= 1 {
                self = .version(number)
            } else {
                return nil
            }
        }
    }

    /// What ``resolve(_:keeping:)`` did.
    public struct Resolution: Sendable {
        /// How many conflict versions were resolved and removed.
        public let resolvedCount: Int
        /// The conflict version whose contents are now the file's (`nil` when the current
        /// contents were kept). Its contents are gone from the store now; its metadata remains.
        public let kept: FileVersion?
    }

    /// Why a resolution could not start. Nothing was changed.
    public enum ResolutionError: Error, LocalizedError, Equatable {
        /// There is no conflict version with that number.
        case noSuchVersion(Int, name: String, count: Int)

        /// The message a tool prints for this failure.
        public var errorDescription: String? {
            switch self {
            case .noSuchVersion(let number, let name, 0):
                return "“\(name)” has no unresolved conflict versions, so there is no version \(number)"
            case .noSuchVersion(let number, let name, let count):
                return "“\(name)” has \(count) unresolved conflict version\(count == 1 ? "" : "s"); there is no version \(number)"
            }
        }
        /// The same text as `errorDescription`.
        public var failureReason: String? { errorDescription }
    }

    /// The unresolved conflict versions of the file at `url`, oldest first.
    /// - Throws: ``FileVersionError`` when the store cannot be read.
    public static func list(_ url: URL) throws(FileVersionError) -> [FileVersion] {
        try FileVersion.unresolvedConflictVersionsOfItem(at: url)
    }

    /// The line a tool prints after ``resolve(_:keeping:)`` resolved the conflicts of `url`.
    public static func report(_ resolution: Resolution, keeping keep: Keep, of url: URL) -> String {
        let name = url.lastPathComponent
        let count = "\(resolution.resolvedCount) conflict\(resolution.resolvedCount == 1 ? "" : "s")"
        switch keep {
        case .current where resolution.resolvedCount == 0:
            return "No unresolved conflicts in \(name)."
        case .current:
            return "Kept the current \(name); resolved and removed \(count)."
        case .version(let number):
            let computer = resolution.kept?.localizedNameOfSavingComputer.map { " (from \($0))" } ?? ""
            return "Replaced \(name) with conflict version \(number)\(computer); resolved and removed \(count)."
        }
    }

    /// The listing the tools print: a header, then one line per version — its number, date
    /// (ISO 8601, UTC), saving computer (left out when the version does not say) and `summary`
    /// of its contents.
    public static func listing(_ versions: [FileVersion], of url: URL, summary: (FileVersion) -> String) -> String {
        let name = url.lastPathComponent
        guard !versions.isEmpty else { return "No unresolved conflicts in \(name).\n" }
        let formatter = ISO8601DateFormatter()
        var text = "\(versions.count) unresolved conflict version\(versions.count == 1 ? "" : "s") of \(name):\n"
        for (index, version) in versions.enumerated() {
            let date = version.modificationDate.map { formatter.string(from: $0) } ?? "unknown date"
            let computer = version.localizedNameOfSavingComputer.map { "  \($0)" } ?? ""
            text += "  \(index + 1)  \(date)\(computer)  \(summary(version))\n"
        }
        return text
    }

    /// Resolves every unresolved conflict of the file at `url`, in one coordinated write of it:
    /// with ``Keep/version(_:)`` the file is first replaced by that version's contents
    /// (``FileVersion/replaceItem(at:options:coordinator:)``); then every conflict version is
    /// marked resolved and removed from the store. Earlier versions that are not conflicts stay.
    ///
    /// - Throws: ``ResolutionError`` (nothing changed), ``FileVersionError`` or the coordination
    ///   error. A failure after the replacement leaves the file replaced and the remaining
    ///   conflicts unresolved; running the command again with `current` finishes it.
    public static func resolve(_ url: URL, keeping keep: Keep) throws -> Resolution {
        let coordinator = Coordinator()
        return try coordinator.coordinate(writingItemAt: url) { itemURL in
            let conflicts = try FileVersion.unresolvedConflictVersionsOfItem(at: itemURL)
            var kept: FileVersion?
            if case .version(let number) = keep {
                guard conflicts.indices.contains(number - 1) else {
                    throw ResolutionError.noSuchVersion(number, name: itemURL.lastPathComponent, count: conflicts.count)
                }
                kept = conflicts[number - 1]
                try conflicts[number - 1].replaceItem(at: itemURL, coordinator: coordinator)
            }
            for conflict in conflicts {
                try conflict.resolve(coordinator: coordinator)
                do throws(FileVersionError) { try conflict.remove(coordinator: coordinator) } catch {
                    // Removed meanwhile by someone else: resolved all the same.
                    guard case .versionNotFound = error else { throw error }
                }
            }
            return Resolution(resolvedCount: conflicts.count, kept: kept)
        }
    }

    /// The first line of a text file's contents (at most 60 characters, quoted), or what the
    /// contents are when they are not text.
    public static func firstLine(of url: URL) -> String {
        guard let data = try? Data(contentsOf: url, options: .mappedIfSafe) else { return "(contents unreadable)" }
        let head = data.prefix(4096)
        let lineBytes = head.prefix { $0 != UInt8(ascii: "\n") }
        // A line cut at 4096 bytes may end inside a character: drop up to 3 bytes then.
        let cuts = lineBytes.count == head.count && head.count == 4096 ? 0...3 : 0...0
        guard let text = cuts.lazy.compactMap({ String(validating: lineBytes.dropLast($0), as: UTF8.self) }).first else {
            return "(\(data.count) bytes, not UTF-8 text)"
        }
        guard !data.isEmpty else { return "(empty)" }
        var line = String(text.prefix { $0 != "\r" && $0 != "\r\n" })
        if line.count > 60 { line = String(line.prefix(59)) + "…" }
        return "“\(line)”"
    }
}
