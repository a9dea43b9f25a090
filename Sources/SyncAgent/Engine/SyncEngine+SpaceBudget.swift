import Foundation
import Glibc
import SystemSupport

/// The optional space budget of a container (`space-budget = 2G` in ubiquity.conf,
/// ``SyncEngineConfiguration/spaceBudget``).
extension SyncEngine {
    /// One item the budget may evict.
    struct BudgetCandidate: Sendable {
        var path: String
        var size: Int64
        /// The latest of its access and modification times (nanoseconds since 1970): how recently
        /// it was used.
        var lastUsed: Int64
    }

    /// After a pass: while the container's files (every regular file in it, synced or not, as
    /// the pass's scan found them plus what the pass downloaded) take more than the budget,
    /// evicts the least recently used eligible items — the latest of their access and
    /// modification times, oldest first — until it fits or none is left. Returns the paths
    /// evicted.
    ///
    /// Eligible: a synced file or package, uploaded and unchanged since (its fingerprint is the
    /// journal's), in no conflict, not pinned, not asked for, and not used within
    /// ``SyncEngineConfiguration/spaceBudgetGrace`` (it may be open). Each eviction is the
    /// ordinary one (``evict(_:)``): a coordinated write with `.forMerging`, so a document open in
    /// any process saves first — one with unsaved changes is then not uploaded, and refused.
    /// FileCoordination does not say whether another process presents an item, so a *clean*
    /// document open for longer than the grace period can be evicted; it then finds its file
    /// gone and closes, as for any deletion (it had nothing unsaved).
    func enforceSpaceBudget(excluding wanted: Set<String>) async -> [String] {
        guard let budget = configuration.spaceBudget else { return [] }
        let entries = journal.entries
        let conflicted = Set(journal.conflicts.values.map(\.itemPath))
        let onDemand = self.onDemand
        let container = PathBytes.path(of: configuration.containerURL)
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        let grace = Int64(configuration.spaceBudgetGrace.components.seconds) * 1_000_000_000
        let measured = try? await offThePool { () throws(SyncStepError) -> (Int64, [BudgetCandidate]) in
            let total = Self.bytesHeld(in: container)
            var candidates: [BudgetCandidate] = []
            for entry in entries.values where !entry.isFolder && entry.state == .synced && entry.tagUnverified != true {
                guard !conflicted.contains(entry.path), !onDemand.isPinned(entry.path), !onDemand.downloads.contains(entry.path),
                      !wanted.contains(entry.path), let expected = entry.local else { continue }
                let full = container + "/" + entry.path
                let now = entry.isPackage == true ? PackageTree.fingerprint(full) : LocalScanner.fingerprint(full)
                guard let now, now == expected else { continue }
                var info = stat()
                guard lstat(full, &info) == 0 else { continue }
                let accessed = Int64(info.st_atim.tv_sec) * 1_000_000_000 + Int64(info.st_atim.tv_nsec)
                candidates.append(BudgetCandidate(path: entry.path, size: now.size,
                                                  lastUsed: max(accessed, now.modifiedNanoseconds)))
            }
            return (total, candidates)
        }
        guard var (total, candidates) = measured, total > budget else { return [] }
        candidates.removeAll { now - $0.lastUsed < grace }
        candidates.sort { ($0.lastUsed, $0.path) < ($1.lastUsed, $1.path) }
        var evicted: [String] = []
        for candidate in candidates where total > budget {
            guard let base = journal.entries[candidate.path] else { continue }
            if await evictItem(candidate.path, base: base) == nil {
                total -= candidate.size
                evicted.append(candidate.path)
            }
        }
        return evicted
    }

    /// The bytes of every regular file in the folder at `root` and below (links not followed,
    /// placeholders and other names the agent never syncs included: they take space too).
    static func bytesHeld(in root: String) -> Int64 {
        var total: Int64 = 0
        var pending = [root]
        while let folder = pending.popLast() {
            guard let names = LocalCoordination.entryNames(ofFolder: folder) else { continue }
            for name in names {
                let full = folder + "/" + name
                var info = stat()
                guard lstat(full, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR: pending.append(full)
                case S_IFREG: total += Int64(info.st_size)
                default: break
                }
            }
        }
        return total
    }
}
