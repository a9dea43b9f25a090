import Glibc
import Synchronization

/// The process-wide table of lock files, keyed by canonical item path, and the protocol that
/// creates a lock file the first time an item is ever coordinated.
final class LockTable: Sendable {
    static let shared = LockTable()
    private let files = Locked<[String: LockFile]>([:])
    private static let tableLimit = 4096

    func file(for itemPath: String, in directory: LockDirectory) -> LockFile {
        file(for: itemPath, filePath: nil, directory: directory)
    }

    /// The entry for a lock file found on disk (a descendant listed by a directory delete/move).
    func file(for key: String, filePath: String) -> LockFile {
        file(for: key, filePath: filePath, directory: nil)
    }

    private func file(for key: String, filePath: String?, directory: LockDirectory?) -> LockFile {
        files.withLock { files in
            if let file = files[key] { return file }
            if files.count >= Self.tableLimit { files.removeAll(keepingCapacity: true) }
            let file = LockFile(
                itemPath: key,
                filePath: filePath ?? LockFileNaming.lockFilePath(for: key, in: directory?.path ?? ""))
            files[key] = file
            return file
        }
    }

    /// Creates `file` on disk and returns a descriptor of it.
    ///
    /// While it creates the file, the creator holds the *tree* lock of every directory above the
    /// item shared, so that a delete/move of such a directory — which takes its tree lock
    /// exclusively and then lists the lock files inside — either waits for the new file to exist
    /// or has already listed the folder and holds its tree lock, making the creator wait.
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
            let ancestor = self.file(for: ancestorPath, in: directory)
            let fd = try ancestor.checkout { (missing) throws(CoordinationError) -> Int32 in
                try self.create(missing, in: directory, step: step)
            }
            do {
                try step.take(.shared, fd: fd, start: LockFileLayout.tree, length: 1,
                              itemPath: ancestorPath, subtree: true)
            } catch {
                ancestor.checkin(fd)
                throw error
            }
            treeHolds.append((ancestor, fd))
        }
        try makeMirrorDirectories(for: file.itemPath, in: directory)
        let fd = open(file.filePath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .lockFailed(path: file.filePath, errno: errno) }
        return fd
    }

    private func makeMirrorDirectories(for itemPath: String, in directory: LockDirectory) throws(CoordinationError) {
        var current = directory.path
        for component in itemPath.split(separator: "/") {
            current += "/" + LockFileNaming.escape(component)
            if mkdir(current, 0o700) != 0 {
                let code = errno
                if code != EEXIST { throw .lockFailed(path: current, errno: code) }
            }
        }
    }
}
