import Glibc

/// Lock borrowing across processes (Docs/RemotePresenters.md §3): a save or deletion request to a
/// presenter in another process carries the asker's lock descriptors (`SCM_RIGHTS`), and the
/// presenter's process makes of them a *borrowing* `LockOwner` that its presenter's coordinators
/// join while they answer — exactly as `PresenterBorrowing` does within one process, the shared
/// open file descriptions standing in for the shared `LockOwner` object.
enum RemoteLockLending {
    /// The asker's side: what goes with a request carrying `token` — the plain-mode holdings of
    /// the owner lent under it, with their descriptors (still the owner's: `sendmsg` gives the
    /// peer its own references). Nil when the token no longer resolves, nothing is held, or more
    /// holdings are held than one frame may carry (`UnixSocket.descriptorLimit`): the request
    /// then lends nothing, and a presenter that coordinates waits for the asker's locks as it did
    /// before borrowing crossed processes (until the asker's timeout).
    static func borrow(for token: BorrowToken, lending: LockLending) -> RemoteBorrow? {
        guard let owner = lending.owner(token) else { return nil }
        let lent = owner.lendableHoldings()
        guard !lent.isEmpty, lent.count <= UnixSocket.descriptorLimit else { return nil }
        let holdings = lent.map {
            RemoteHolding(lockPath: $0.path, group: nil, readers: UInt32(clamping: $0.readers),
                          writers: UInt32(clamping: $0.writers), trees: UInt32(clamping: $0.trees))
        }
        return RemoteBorrow(token: token.value, holdings: holdings, descriptors: lent.map(\.fd))
    }

    /// The presenter's side: a borrowing owner made of the received holdings and descriptors,
    /// its lock files this process's entries in `lockTable` for the lock directory at
    /// `lockDirectoryPath`. The descriptors become the owner's (closed by `endBorrowing`); when
    /// nothing can be borrowed (a group-mode holding, a count of zero, a descriptor that is not a
    /// lock file of ours), they are closed here and nil is returned — the request is then
    /// delivered without a token.
    static func owner(for borrow: RemoteBorrow, lockTable: LockTable, lockDirectoryPath: String?) -> LockOwner? {
        let descriptors = borrow.descriptors
        guard let lockDirectoryPath, descriptors.count == borrow.holdings.count, !descriptors.isEmpty,
              borrow.holdings.allSatisfy({ $0.group == nil && $0.readers + $0.writers + $0.trees > 0 }),
              descriptors.allSatisfy(isLockFile) else {
            for descriptor in descriptors { close(descriptor) }
            return nil
        }
        let directory = LockDirectory(path: lockDirectoryPath)
        let lent = zip(borrow.holdings, descriptors).map { holding, fd in
            LockOwner.LentHolding(path: holding.lockPath, fd: fd, readers: Int(holding.readers),
                                  writers: Int(holding.writers), trees: Int(holding.trees))
        }
        let files = lent.map { lockTable.file(for: $0.path, in: directory) }
        return LockOwner(borrowing: lent, files: files, lockTable: lockTable)
    }

    /// A regular file owned by this user: what a lock file is (a peer of the same user could send
    /// anything it can open; this keeps a socket or a device out of the lock protocol).
    private static func isLockFile(_ fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid()
    }
}
