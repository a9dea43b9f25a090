import Glibc

/// The process-wide cache of idle lock-file descriptors (open, holding no lock), least recently
/// used first, bounded by `limit` whatever the number of items coordinated.
///
/// Keeping a descriptor lets the next holder of the same item skip the `open`; bounding them keeps
/// a process that coordinates thousands of files (a folder scan, a sync agent) far from its
/// descriptor limit. The oldest descriptor is closed when a new one would exceed the limit.
final class IdleDescriptors: Sendable {
    /// Process-wide, not per `CoordinationRuntime`: descriptors (and the limit they count
    /// against) belong to the process, so the bound must hold for all runtimes together.
    static let shared = IdleDescriptors(limit: 64)

    private struct Entry {
        let file: LockFile
        let fd: Int32
    }
    private let entries = Locked<[Entry]>([])
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        entries.withLock { $0.reserveCapacity(limit + 1) }
    }

    /// The most recently returned idle descriptor of `file`, taken out of the cache.
    func take(for file: LockFile) -> Int32? {
        entries.withLock { entries in
            var index = entries.endIndex
            while index > entries.startIndex {
                index -= 1
                if entries[index].file === file { return entries.remove(at: index).fd }
            }
            return nil
        }
    }

    /// Keeps `fd` (which must hold no lock) for the next holder of `file`; closes the least
    /// recently used descriptor when over the limit.
    func put(_ fd: Int32, for file: LockFile) {
        let evicted = entries.withLock { entries -> Entry? in
            entries.append(Entry(file: file, fd: fd))
            return entries.count > limit ? entries.removeFirst() : nil
        }
        if let evicted { LockFile.close(evicted.fd) }
    }

    /// Closes every idle descriptor of the lock file at `filePath` (it was unlinked).
    func discardAll(filePath: String) {
        let removed = entries.withLock { entries -> [Int32] in
            var removed: [Int32] = []
            entries.removeAll { entry in
                guard entry.file.filePath == filePath else { return false }
                removed.append(entry.fd)
                return true
            }
            return removed
        }
        for fd in removed { LockFile.close(fd) }
    }

    /// How many descriptors are cached (for tests).
    var count: Int { entries.withLock { $0.count } }
}
