import Glibc

/// Removes lock files whose item no longer exists, and mirror folders left empty, so the lock
/// directory does not grow forever — without ever letting two holders lock two different files
/// for one item.
///
/// The protocol (Docs/Coordination.md, "Reclaiming lock files"):
/// - the reclaimer opens a lock file and takes an exclusive lock on the *whole* file without
///   waiting — so nobody holds any lock on it, and nobody can take one while it decides;
/// - it checks that its descriptor is still the file linked at that path (`fstat` against
///   `lstat`) and that the item does not exist;
/// - it advances the shared `ReclaimEpoch`, unlinks the file, and only then closes (unlocks) it;
/// - every holder, once its first lock on a descriptor is granted, checks that the descriptor's
///   file is still linked (`LockFile.confirmLinked`) and otherwise starts again with a fresh
///   `open` (creating the file anew, under the ancestors' tree locks).
///
/// Work is bounded per pass: a pass visits at most `budget` mirror folders and resumes the walk
/// where the previous pass stopped.
final class LockFileReclaimer: Sendable {
    let directory: LockDirectory
    private let epoch: ReclaimEpoch?

    /// A mirror folder still to visit, and its item path (nil when a component above was stored
    /// hashed, so the item cannot be named).
    private struct Pending {
        let mirror: String
        let item: String?
    }
    /// The walk in progress (a stack; empty: the next pass starts at the top). Held for the
    /// whole pass, so passes of one reclaimer never overlap.
    private let walk = Locked<[Pending]>([])

    struct PassResult: Equatable {
        var visited = 0
        var reclaimedFiles = 0
        var removedFolders = 0
        /// True when the pass reached the end of the walk.
        var finishedSweep = false
    }

    init(directory: LockDirectory) {
        self.directory = directory
        self.epoch = ReclaimEpoch.of(directoryPath: directory.path)
    }

    /// Visits up to `budget` mirror folders, reclaiming what it can.
    func pass(budget: Int) -> PassResult {
        walk.withLock { stack in
            var result = PassResult()
            if stack.isEmpty { stack.append(Pending(mirror: directory.path, item: "/")) }
            while result.visited < budget, let next = stack.popLast() {
                result.visited += 1
                visit(next, stack: &stack, result: &result)
            }
            result.finishedSweep = stack.isEmpty
            return result
        }
    }

    /// Runs passes until a whole sweep of the lock directory is done (for tests and tools).
    func sweep(budget: Int = 1024) -> PassResult {
        var total = PassResult()
        repeat {
            let result = pass(budget: budget)
            total.visited += result.visited
            total.reclaimedFiles += result.reclaimedFiles
            total.removedFolders += result.removedFolders
            total.finishedSweep = result.finishedSweep
        } while !total.finishedSweep
        return total
    }

    private func visit(_ folder: Pending, stack: inout [Pending], result: inout PassResult) {
        guard let listing = Self.list(folder.mirror) else { return }
        var children = 0
        for name in listing.folders {
            // `@epoch` and any other `@` name that is not an escaped (`@@`) or hashed (`@#`) item.
            if name.hasPrefix("@"), !name.hasPrefix("@@"), !name.hasPrefix("@#") { continue }
            children += 1
            let item: String?
            if let parent = folder.item, let component = LockFileNaming.unescape(name) {
                item = parent == "/" ? "/" + component : parent + "/" + component
            } else {
                item = nil
            }
            stack.append(Pending(mirror: folder.mirror + "/" + name, item: item))
        }
        guard folder.mirror != directory.path else { return }  // the root item `/` always exists
        var hasLockFile = listing.hasLockFile
        if hasLockFile, reclaim(lockFile: folder.mirror + "/" + LockFileNaming.lockFileName, item: folder.item) {
            result.reclaimedFiles += 1
            hasLockFile = false
        }
        if !hasLockFile, children == 0, listing.others == 0 {
            result.removedFolders += removeEmptyFolders(from: folder.mirror)
        }
    }

    /// Unlinks the lock file at `path` when nobody holds it and its item does not exist.
    /// Returns true when it was unlinked.
    func reclaim(lockFile path: String, item: String?) -> Bool {
        // Without the shared epoch, holders that skip `fstat` could miss an unlink: never unlink.
        guard let epoch else { return false }
        if let item, Self.exists(item) { return false }
        let fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { LockFile.close(fd) }  // closing drops our exclusive lock, after the unlink
        guard OFDLock.apply(.exclusive, fd: fd, start: 0, length: 0, wait: false) == .done else { return false }
        // Still the file linked at `path` (another reclaimer may have replaced it meanwhile)?
        var held = stat(), linked = stat()
        guard fstat(fd, &held) == 0, held.st_nlink > 0, lstat(path, &linked) == 0,
              held.st_dev == linked.st_dev, held.st_ino == linked.st_ino else { return false }
        // The item may have appeared meanwhile (only a cost, not a danger: check again).
        if let item, Self.exists(item) { return false }
        guard epoch.advance(), unlink(path) == 0 else { return false }
        IdleDescriptors.shared.discardAll(filePath: path)
        return true
    }

    /// Removes `folder` and then its parents while they are empty, up to (not including) the
    /// lock directory. A creator that loses a folder this way gets `ENOENT` and makes it again.
    private func removeEmptyFolders(from folder: String) -> Int {
        var removed = 0
        var current = folder
        while current.count > directory.path.count, current.hasPrefix(directory.path + "/"), rmdir(current) == 0 {
            removed += 1
            guard let slash = current.lastIndex(of: "/") else { break }
            current = String(current[..<slash])
        }
        return removed
    }

    private static func exists(_ item: String) -> Bool {
        var info = stat()
        if lstat(item, &info) == 0 { return true }
        // Only a definite "not there" counts as gone (not, say, a folder we may not search).
        return errno != ENOENT && errno != ENOTDIR
    }

    private struct Listing {
        var folders: [String] = []
        var hasLockFile = false
        /// Entries that are neither the lock file nor folders (`@epoch`, strays).
        var others = 0
    }

    private static func list(_ folder: String) -> Listing? {
        guard let stream = opendir(folder) else { return nil }
        defer { closedir(stream) }
        var listing = Listing()
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name == "." || name == ".." { continue }
            var type = entry.pointee.d_type
            if type == UInt8(DT_UNKNOWN) {
                var info = stat()
                guard lstat(folder + "/" + name, &info) == 0 else { continue }
                type = info.st_mode & S_IFMT == S_IFDIR ? UInt8(DT_DIR) : UInt8(DT_REG)
            }
            if name == LockFileNaming.lockFileName {
                listing.hasLockFile = true
            } else if type == UInt8(DT_DIR) {
                listing.folders.append(name)
            } else {
                listing.others += 1
            }
        }
        return listing
    }
}
