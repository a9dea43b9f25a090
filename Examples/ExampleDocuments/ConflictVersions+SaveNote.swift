import CloudDocuments
import Foundation

/// Telling the user when a document save kept a conflict version.
///
/// A save that finds its file changed by another program since the document read it, and cannot
/// merge the two, writes the document's contents and keeps the other program's as an unresolved
/// conflict version (see ``CloudDocument/resolveConflict(withCurrentContentsAt:ofType:saving:)``).
/// The save succeeds, so a command-line tool must say so itself, or the user never learns that
/// there is something to resolve.
extension ConflictVersions {
    /// How many unresolved conflict versions the item at `url` has: 0 when it has none, when
    /// nothing is at `url`, or when the version store cannot be read. Blocking (it reads the
    /// store and the item's folder); any thread.
    public static func unresolvedCount(of url: URL) -> Int {
        guard FileManager.default.fileExists(atPath: url.path) else { return 0 }
        return (try? list(url).count) ?? 0
    }

    /// Runs `save` — a document save to `url`, or a close that may save — and returns whether
    /// the item at `url` gained unresolved conflict versions meanwhile.
    ///
    /// Another program that adds a conflict version of the same item at the same moment is
    /// counted too; nothing else is. Rethrows what `save` throws. On the main actor, like the
    /// document calls it wraps.
    @MainActor
    public static func savingKeptConflict(at url: URL, _ save: () async throws -> Void) async rethrows -> Bool {
        let before = unresolvedCount(of: url)
        try await save()
        return unresolvedCount(of: url) > before
    }

    /// The line `tool` prints on standard error after a save of `url` kept a conflict version.
    public static func keptConflictNote(of url: URL, tool: String) -> String {
        let name = url.lastPathComponent
        return "\(tool): \(name) had been changed by another program; that version was kept as a conflict version "
            + "(list it with “\(tool) conflicts \(name)”, then “\(tool) resolve \(name) --keep current|N”)"
    }
}
