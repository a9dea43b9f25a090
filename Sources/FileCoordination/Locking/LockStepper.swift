/// Takes one kernel lock for a coordinated access: first without waiting (the fast path); when
/// another holder is in the way, checks that waiting cannot deadlock this thread, then sleeps
/// until granted, timed out or cancelled.
struct LockStepper {
    let context: WaitContext
    let owner: LockOwner

    func take(
        _ kind: OFDLock.Kind, fd: Int32, start: Int, length: Int, itemPath: String, subtree: Bool
    ) throws(CoordinationError) {
        switch OFDLock.apply(kind, fd: fd, start: start, length: length, wait: false) {
        case .done:
            return
        case .failed(let code):
            throw .lockFailed(path: itemPath, errno: code)
        case .wouldBlock, .interrupted:
            try ThreadClaims.checkWaitIsSafe(
                path: itemPath, exclusive: kind == .exclusive, subtree: subtree, group: owner.groupKey)
            try OFDLock.acquireWaiting(kind, fd: fd, start: start, length: length,
                                       context: context, path: itemPath)
        }
    }

    func ownerHoldsTree(_ path: String) -> Bool { owner.holdsTree(path) }
}
