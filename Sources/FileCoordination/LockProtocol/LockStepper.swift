import Foundation

/// Takes one kernel lock for a coordinated access: first without waiting (the fast path); when
/// another holder is in the way, checks that waiting cannot deadlock this thread, then sleeps
/// until granted, timed out or cancelled.
struct LockStepper {
    let context: WaitContext
    let owner: LockOwner
    /// Set while the access already holds an item lock: a directory's tree byte that a lock-file
    /// creation needs (shared) is then never waited for with that lock held — a directory being
    /// moved or deleted holds its tree byte and waits for the items inside, one of which may be
    /// ours. The blocked directory is recorded here and the acquisition backs off (`HeldLocks`).
    var treeBackOff: TreeBackOff? = nil

    func take(
        _ kind: OFDLock.Kind, fd: Int32, start: Int, length: Int, itemPath: String, subtree: Bool
    ) throws(CoordinationError) {
        switch OFDLock.apply(kind, fd: fd, start: start, length: length, wait: false) {
        case .done:
            return
        case .failed(let code):
            throw .lockFailed(path: itemPath, errno: Errno(rawValue: code))
        case .wouldBlock, .interrupted:
            if let treeBackOff, subtree, kind == .shared {
                treeBackOff.blocked(at: itemPath)
                throw .wouldDeadlock(URL(fileURLWithPath: itemPath))
            }
            try ThreadClaims.checkWaitIsSafe(
                path: itemPath, exclusive: kind == .exclusive, subtree: subtree, group: owner.groupKey)
            owner.assertStateNotHeld("a kernel lock wait")
            try OFDLock.acquireWaiting(kind, fd: fd, start: start, length: length,
                                       context: context, path: itemPath)
        }
    }

    func ownerHoldsTree(_ path: String) -> Bool { owner.holdsTree(path) }
}

/// Which directory's tree byte an acquisition found taken while it held an item lock (see
/// `LockStepper.treeBackOff`). Used by one acquiring thread only.
final class TreeBackOff: @unchecked Sendable {
    // @unchecked: written and read by the one thread that runs `HeldLocks.acquire`.
    private(set) var blockedPath: String?

    func blocked(at path: String) { blockedPath = path }
    func reset() { blockedPath = nil }
}
