import Foundation
import Glibc
import Synchronization

/// A runtime's table of lock files (`CoordinationRuntime.lockTable`), keyed by canonical item path, and the protocol that
/// creates a lock file when its item is coordinated and it does not exist (the first time, or
/// after it was reclaimed).
///
/// The table holds no descriptors (idle ones live in the bounded `IdleDescriptors`), only the
/// small `LockFile` values, so it may be cleared at any time.
final class LockTable: Sendable {
    private struct State {
        var files: [String: LockFile] = [:]
        /// The reclaim scheduler of the lock directory `files` belong to (its runtime's; shared
        /// with other runtimes of the process that use the same directory).
        var scheduler: ReclaimScheduler?
    }
    private let state = Locked(State())
    /// Where this runtime's lock owners wait for another thread's kernel transition of the same
    /// holding (`LockOwner.waitForTransition`). Rare, so one condition serves every owner of the
    /// runtime; each waiter re-checks its own owner's transition count.
    let ownerTransitions = NSCondition()
    private static let tableLimit = 4096
    /// After this many failed attempts in a row to create a lock file because a reclaimer removed
    /// an empty mirror folder in between, give up (it would take a reclaimer racing us each time).
    private static let creationAttempts = 64

    func file(for itemPath: String, in directory: LockDirectory) -> LockFile {
        file(for: itemPath, filePath: nil, directory: directory)
    }

    /// The entry for a lock file found on disk (a descendant listed by a directory delete/move).
    func file(for key: String, filePath: String) -> LockFile {
        file(for: key, filePath: filePath, directory: nil)
    }

    private func file(for key: String, filePath: String?, directory: LockDirectory?) -> LockFile {
        state.withLock { state in
            if let directory {
                if state.scheduler?.reclaimer.directory != directory {
                    // Another lock directory (only tests use more than one): its own files.
                    state.files.removeAll()
                    state.scheduler = ReclaimScheduler.of(directory)
                }
                // Each look-up counts as activity: the reclaimer runs once things settle.
                state.scheduler?.noteActivity()
            }
            if let file = state.files[key] { return file }
            if state.files.count >= Self.tableLimit { state.files.removeAll(keepingCapacity: true) }
            // A file found on disk has the epoch of the directory it lies in, when that is the
            // one in use (otherwise none: its holders always check with `fstat`).
            let current = state.scheduler?.reclaimer.directory.path
            let directoryPath = directory?.path
                ?? current.flatMap { current in filePath?.hasPrefix(current + "/") == true ? current : nil }
            let file = LockFile(
                itemPath: key,
                filePath: filePath ?? LockFileNaming.lockFilePath(for: key, in: directory?.path ?? ""),
                epoch: directoryPath.flatMap { ReclaimEpoch.of(directoryPath: $0) },
                pendingWriters: directoryPath.flatMap { PendingWriters.of(directoryPath: $0) })
            state.files[key] = file
            return file
        }
    }

    /// Creates `file` on disk and returns a descriptor of it.
    ///
    /// While it creates the file, the creator holds the *tree* lock of every directory above the
    /// item shared, so that a delete/move of such a directory — which takes its tree lock
    /// exclusively and then lists the lock files inside — either waits for the new file to exist
    /// or has already listed the folder and holds its tree lock, making the creator wait. Each
    /// ancestor's tree lock is checked to sit on that ancestor's *linked* lock file (a reclaimed
    /// one would exclude nobody).
    func create(
        _ file: LockFile, in directory: LockDirectory, step: LockStepper
    ) throws(CoordinationError) -> Int32 {
        var treeHolds: [(LockFile, Int32)] = []
        defer {
            for (ancestor, fd) in treeHolds {
                _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.tree, length: 1, wait: false)
                ancestor.checkin(fd)
            }
        }
        for ancestorPath in CanonicalPath.selfAndAncestors(file.itemPath).dropLast() {
            if step.ownerHoldsTree(ancestorPath) { continue }
            let ancestor = self.file(for: ancestorPath, filePath: nil, directory: directory)
            var fd = try ancestor.checkout { (missing) throws(CoordinationError) -> Int32 in
                try self.create(missing, in: directory, step: step)
            }
            let takeTree = { (fd: Int32) throws(CoordinationError) -> Void in
                try step.take(.shared, fd: fd, start: LockFileLayout.tree, length: 1,
                              itemPath: ancestorPath, subtree: true)
            }
            do {
                try takeTree(fd)
                try ancestor.keepLinked(&fd, table: self, stepper: step, locate: { (ancestor, directory) }, lock: takeTree)
            } catch {
                if fd >= 0 {
                    _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.tree, length: 1, wait: false)
                    ancestor.checkin(fd)
                }
                throw error
            }
            treeHolds.append((ancestor, fd))
        }
        let mirror = LockFileNaming.mirrorDirectory(for: file.itemPath, in: directory.path)
        for _ in 0..<Self.creationAttempts {
            let fd = open(file.filePath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                ReclaimScheduler.of(directory).noteCreation()
                return fd
            }
            let code = errno
            guard code == ENOENT else { throw .lockFailed(path: file.filePath, errno: Errno(rawValue: code)) }
            // The mirror folder is missing (new, or a reclaimer removed it as empty): make it.
            try makeFolder(mirror, in: directory)
        }
        throw .lockFailed(path: file.filePath, errno: .noSuchFileOrDirectory)
    }

    /// Makes the mirror folder `folder` (mode 0700), and the ones above it that are missing —
    /// deepest first, so the usual case costs one `mkdir`. A folder that vanishes meanwhile is
    /// left to the caller's next attempt.
    private func makeFolder(_ folder: String, in directory: LockDirectory) throws(CoordinationError) {
        if mkdir(folder, 0o700) == 0 { return }
        var code = errno
        if code == ENOENT, folder.count > directory.path.count + 1, let slash = folder.lastIndex(of: "/") {
            try makeFolder(String(folder[..<slash]), in: directory)
            if mkdir(folder, 0o700) == 0 { return }
            code = errno
        }
        guard code == EEXIST || code == ENOENT else { throw .lockFailed(path: folder, errno: Errno(rawValue: code)) }
    }
}
