import Glibc
import Synchronization

/// The lock file of one canonical item path, and a small pool of open descriptors of it.
///
/// Every holder (a coordinator's hold on the item) uses a descriptor of its own — a separate open
/// file description — because OFD locks on one description never conflict with each other. Idle
/// descriptors are kept (up to `poolLimit`) so the next holder skips the `open`.
final class LockFile: Sendable {
    let itemPath: String
    let filePath: String
    private let idle = Locked<[Int32]>([])
    private static let poolLimit = 4

    init(itemPath: String, filePath: String) {
        self.itemPath = itemPath
        self.filePath = filePath
    }

    deinit {
        for fd in idle.withLock({ $0 }) { close(fd) }
    }

    /// A descriptor with no locks on it. Opens (and, the first time ever, creates) the lock file.
    func checkout(creating: (LockFile) throws(CoordinationError) -> Int32) throws(CoordinationError) -> Int32 {
        if let fd = idle.withLock({ $0.popLast() }) { return fd }
        let fd = open(filePath, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { return fd }
        let code = errno
        guard code == ENOENT else { throw .lockFailed(path: filePath, errno: code) }
        return try creating(self)
    }

    /// Returns a descriptor that holds no locks any more.
    func checkin(_ fd: Int32) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < Self.poolLimit else { return false }
            idle.append(fd)
            return true
        }
        if !kept { close(fd) }
    }
}
