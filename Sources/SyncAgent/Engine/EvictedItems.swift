import Foundation
import Glibc
import SystemSupport
import Ubiquity

/// Files on demand, as the agent sees them: a synced item whose file is gone but whose
/// placeholder (``ItemPlaceholder``) is beside where it was has been evicted, not deleted. The
/// planner plans nothing for it (``SyncPlanInput/evicted``): it is neither deleted on the server
/// nor downloaded again; placeholders themselves are never synced (``SyncExclusions``).
///
/// Evicting and downloading on request are the next step (issue 19); today this keeps an item
/// evicted by a future release, or by hand, from being read as a deletion. Any thread.
enum EvictedItems {
    /// The journal's paths missing from `local` that have a placeholder in `container`. One
    /// `lstat` per synced path missing here (a pass's deletions), none when nothing is missing.
    static func paths(known base: [String: JournalEntry], missingFrom local: [String: LocalItem]?,
                      in container: URL) -> [String] {
        guard let local else { return [] }
        let containerPath = PathBytes.path(of: container)
        var evicted: [String] = []
        for path in base.keys where local[path] == nil && hasPlaceholder(path, in: containerPath) {
            evicted.append(path)
        }
        return evicted.sorted()
    }

    /// The synced files present here, changed since the last sync, that still have a
    /// placeholder beside them: written under an evicted item's name by a program that did not
    /// download it first (one that does not use files on demand). Its bytes were made without
    /// the server's copy, so the planner turns them into a conflict, never an upload over that
    /// copy. One `lstat` per changed synced file.
    static func writtenOver(known base: [String: JournalEntry], local: [String: LocalItem]?,
                            in container: URL) -> [String] {
        guard let local else { return [] }
        let containerPath = PathBytes.path(of: container)
        var written: [String] = []
        for (path, item) in local where !item.isFolder {
            guard let entry = base[path], !entry.isFolder, entry.local != item.fingerprint,
                  hasPlaceholder(path, in: containerPath) else { continue }
            written.append(path)
        }
        return written.sorted()
    }

    /// The last ``paths(known:missingFrom:in:)`` and ``writtenOver(known:local:in:)`` with what
    /// they were computed from, for a pass that finds nothing changed since.
    struct Memo: Sendable {
        var base: [String: JournalEntry]
        var local: [String: LocalItem]?
        var evicted: [String]
        var writtenOver: [String]
    }

    /// ``paths(known:missingFrom:in:)`` and ``writtenOver(known:local:in:)``, or `memo`'s answers
    /// when they were made from the same journal and the same scan and nothing at all happened in
    /// the container since (`quiet`: the watcher saw no event — a placeholder made or removed is
    /// an event too). An idle poll then costs two comparisons of dictionaries that share their
    /// storage (at once), not a look-up per synced item. `memo` becomes this pass's.
    static func evictedAndWrittenOver(known base: [String: JournalEntry], local: [String: LocalItem]?, in container: URL,
                                      quiet: Bool, memo: inout Memo?) -> (evicted: [String], writtenOver: [String]) {
        if quiet, let kept = memo, kept.base == base, kept.local == local {
            // Kept with these dictionaries: the next comparison is one of shared storage.
            memo = Memo(base: base, local: local, evicted: kept.evicted, writtenOver: kept.writtenOver)
            return (kept.evicted, kept.writtenOver)
        }
        let evicted = paths(known: base, missingFrom: local, in: container)
        let written = writtenOver(known: base, local: local, in: container)
        memo = Memo(base: base, local: local, evicted: evicted, writtenOver: written)
        return (evicted, written)
    }

    /// Whether the container-relative `path` has a placeholder (a regular file) beside it. One `lstat`.
    private static func hasPlaceholder(_ path: String, in containerPath: String) -> Bool {
        let (folder, name) = split(path)
        guard let placeholder = ItemPlaceholder.placeholderName(forItemNamed: name) else { return false }
        let full = containerPath + "/" + (folder.isEmpty ? "" : folder + "/") + placeholder
        var info = stat()
        return lstat(full, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }
}
