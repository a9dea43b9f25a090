import CSystemShim
import Foundation
import Glibc
import Synchronization
import SystemSupport

// The writer's side of the protocol described on `StrayTemporaryFiles`: creating a temporary save
// item and holding its lock until it is in place. Internal; any thread.

extension StrayTemporaryFiles {
    // MARK: Writer side

    /// Creates the temporary file at `path` (`open` with `flags`, which include
    /// `O_CREAT | O_EXCL` and `O_WRONLY` or `O_RDWR`) and write-locks it. Returns the file and the
    /// lock; the lock lasts until ``TemporaryItemLock/release()``, even after the file is closed.
    static func createLockedFile(_ path: SystemPath, flags: Int32, mode: mode_t) throws(SystemCallError) -> (FileDescriptor, TemporaryItemLock) {
        let (file, _) = try createFileLockedWhileOpen(path, flags: flags, mode: mode)
        do throws(SystemCallError) {
            return (file, try TemporaryItemLock(holding: file.rawValue, path: path.lossless))
        } catch {
            _ = Glibc.close(file.rawValue)
            throw error
        }
    }

    /// ``createLockedFile(_:flags:mode:)`` without the separate lock: the lock lasts as long as
    /// the returned descriptor is open (closing it is the release), which saves duplicating the
    /// descriptor. Also returns the new file's status (`fstat`), taken while checking the name.
    static func createFileLockedWhileOpen(_ path: SystemPath, flags: Int32, mode: mode_t) throws(SystemCallError) -> (FileDescriptor, stat) {
        for _ in 0..<creationAttempts {
            let file = try POSIX.open(path, flags, mode: mode)
            runCreationHook(for: path.lossless)
            do throws(SystemCallError) {
                try lockForWriting(file.rawValue, path: path, kind: .file)
                if let status = try statusIfStillNamed(path, file.rawValue) {
                    return (file, status)
                }
            } catch {
                _ = Glibc.close(file.rawValue)
                throw error
            }
            // A reclaimer removed it before we held the lock: the name is free again.
            _ = Glibc.close(file.rawValue)
        }
        throw SystemCallError(call: "open (temporary file kept being reclaimed)", path: path.lossless, code: EAGAIN)
    }

    /// Creates the temporary package folder at `path` (`mkdir` with `mode`) and locks it. The lock
    /// lasts until ``TemporaryItemLock/release()``.
    static func createLockedFolder(_ path: SystemPath, mode: mode_t) throws(SystemCallError) -> TemporaryItemLock {
        for _ in 0..<creationAttempts {
            try POSIX.makeDirectory(path, mode: mode)
            runCreationHook(for: path.lossless)
            let folder: FileDescriptor
            do throws(SystemCallError) {
                folder = try POSIX.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            } catch where error.code == ENOENT || error.code == ELOOP {
                continue  // Reclaimed (or replaced) before we opened it.
            }
            do throws(SystemCallError) {
                try lockForWriting(folder.rawValue, path: path, kind: .folder)
                if try isStillNamed(path, folder.rawValue) {
                    return TemporaryItemLock(owning: folder.rawValue)
                }
            } catch {
                _ = Glibc.close(folder.rawValue)
                throw error
            }
            _ = Glibc.close(folder.rawValue)
        }
        throw SystemCallError(call: "mkdir (temporary folder kept being reclaimed)", path: path.lossless, code: EAGAIN)
    }

    /// ``createLockedFile(_:flags:mode:)`` for a lossless path string (migration path: for
    /// callers not yet moved to `SystemPath`).
    static func createLockedFile(_ path: String, flags: Int32, mode: mode_t) throws(SystemCallError) -> (FileDescriptor, TemporaryItemLock) {
        try createLockedFile(SystemPath(lossless: path), flags: flags, mode: mode)
    }

    /// ``createLockedFolder(_:mode:)`` for a lossless path string (migration path).
    static func createLockedFolder(_ path: String, mode: mode_t) throws(SystemCallError) -> TemporaryItemLock {
        try createLockedFolder(SystemPath(lossless: path), mode: mode)
    }

    private enum Kind { case file, folder }

    /// Takes the writer's lock, waiting for a reclaimer that holds its lock (for the instant of a
    /// removal). A file system that does not support the lock is not an error: the item is then
    /// written unlocked, and reclaimers, unable to lock it either, leave it alone.
    /// A signal arriving meanwhile (EINTR) does not end the wait: it is taken again.
    private static func lockForWriting(_ fd: Int32, path: SystemPath, kind: Kind) throws(SystemCallError) {
        let result: Result<Int32, Errno>
        switch kind {
        case .file:
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            result = valueOrErrno { fcntl(fd, CSHIM_F_OFD_SETLKW, &lock) }
        case .folder:
            result = valueOrErrno { flock(fd, LOCK_EX) }
        }
        guard case .failure(let error) = result else { return }
        switch error.rawValue {
        case EINVAL, ENOLCK, EOPNOTSUPP, ENOSYS, EBADF: return
        default: throw SystemCallError(call: kind == .file ? "fcntl(F_OFD_SETLKW)" : "flock", path: path.lossless, errno: error)
        }
    }

    /// Whether `path` (not following a final symbolic link) is still the item open as `fd`.
    private static func isStillNamed(_ path: SystemPath, _ fd: Int32) throws(SystemCallError) -> Bool {
        try statusIfStillNamed(path, fd) != nil
    }

    /// The status of the item open as `fd` if `path` (not following a final symbolic link) still
    /// names it, else `nil`.
    private static func statusIfStillNamed(_ path: SystemPath, _ fd: Int32) throws(SystemCallError) -> stat? {
        var opened = stat(), named = stat()
        if case .failure(let error) = valueOrErrno({ fstat(fd, &opened) }) {
            throw SystemCallError(call: "fstat", path: path.lossless, errno: error)
        }
        switch path.withCString({ cPath in valueOrErrno { lstat(cPath, &named) } }) {
        case .success: break
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw SystemCallError(call: "lstat", path: path.lossless, errno: error)
        }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino ? opened : nil
    }

    // MARK: Test hook

    /// Hooks run once, right after a writer created a temporary item in a folder and before it
    /// locks it, by folder path: the only way to make the race with a reclaimer happen on demand.
    private static let creationHooks = Locked<[String: @Sendable () -> Void]>([:])
    private static let creationHookCount = Atomic<Int>(0)

    /// Makes `hook` run once, just after the next temporary item in `folder` is created and
    /// before it is locked. For tests. Any thread.
    static func onNextCreation(inFolder folder: String, _ hook: @escaping @Sendable () -> Void) {
        creationHooks.withLock { $0[folder] = hook }
        creationHookCount.add(1, ordering: .sequentiallyConsistent)
    }

    private static func runCreationHook(for path: String) {
        guard creationHookCount.load(ordering: .relaxed) != 0 else { return }
        let folder = (path as NSString).deletingLastPathComponent
        guard let hook = creationHooks.withLock({ $0.removeValue(forKey: folder) }) else { return }
        creationHookCount.subtract(1, ordering: .sequentiallyConsistent)
        hook()
    }
}

/// The writer's lock on a temporary save item (see ``StrayTemporaryFiles``): an open descriptor
/// sharing the item's open file description. Release it once, after the item was renamed into
/// place or removed. A value; not thread-safe (one save uses it).
struct TemporaryItemLock {
    private let descriptor: Int32

    /// Keeps the lock taken on `fd` (a file's OFD lock) alive past `fd`'s own close, through a
    /// duplicate descriptor of the same open file description.
    fileprivate init(holding fd: Int32, path: String) throws(SystemCallError) {
        let duplicate = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { throw SystemCallError(call: "fcntl(F_DUPFD_CLOEXEC)", path: path, code: errno) }
        descriptor = duplicate
    }

    /// Takes over `fd`, whose open file description holds the lock.
    fileprivate init(owning fd: Int32) {
        descriptor = fd
    }

    /// Drops the lock (closes the descriptor).
    func release() {
        _ = Glibc.close(descriptor)
    }
}
