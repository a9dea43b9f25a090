import Foundation
import Glibc

/// The locks taken for one coordinated access, in the order taken, so they can be given back in
/// reverse. Claims are always taken in path order, which keeps two multi-item coordinations from
/// deadlocking each other.
struct HeldLocks: Sendable {
    let owner: LockOwner
    /// Every lock taken, in order: each claim's, then — for a directory that is deleted, moved or
    /// replaced — its tree lock and the write lock of every item inside.
    private(set) var taken: [ItemLock] = []
    let claims: [LockClaim]
    /// The claims' paths whose whole tree is locked (decided once each claim's write lock is held).
    private(set) var subtrees: Set<String> = []

    /// Takes every claim, waiting as `context` allows. On failure nothing stays held.
    static func acquire(
        _ claims: [LockClaim], owner: LockOwner, context: WaitContext, runtime: CoordinationRuntime
    ) throws(CoordinationError) -> HeldLocks {
        let table = runtime.lockTable
        let backOff = TreeBackOff()
        while true {
            var held = HeldLocks(owner: owner, claims: claims)
            backOff.reset()
            do {
                try held.takeAll(table: table, context: context, runtime: runtime, backOff: backOff)
                return held
            } catch {
                held.release()
                // A directory's tree byte was taken (a move or delete of the directory, waiting
                // for the items inside) while we held an item lock and needed that byte to create
                // a lock file: holding nothing now, wait until the byte is free, then start again.
                // Without this, both would wait for each other for ever.
                guard let blocked = backOff.blockedPath else { throw error }
                try waitForTree(of: blocked, table: table, context: context, runtime: runtime)
            }
        }
    }

    /// Waits, holding nothing, until the tree byte of `path`'s lock file can be taken shared, and
    /// gives it back at once.
    private static func waitForTree(of path: String, table: LockTable, context: WaitContext,
                                    runtime: CoordinationRuntime) throws(CoordinationError) {
        let directory = try runtime.lockDirectory()
        let file = table.file(for: path, in: directory)
        let fd = try file.checkout { (missing) throws(CoordinationError) -> Int32 in
            try table.create(missing, in: directory, step: LockStepper(context: context, owner: LockOwner(lockTable: table)))
        }
        defer {
            _ = OFDLock.apply(.unlock, fd: fd, start: LockFileLayout.tree, length: 1, wait: false)
            file.checkin(fd)
        }
        try OFDLock.acquireWaiting(.shared, fd: fd, start: LockFileLayout.tree, length: 1, context: context, path: path)
    }

    /// Takes every claim in path order (one attempt of `acquire`).
    private mutating func takeAll(table: LockTable, context: WaitContext, runtime: CoordinationRuntime,
                                  backOff: TreeBackOff) throws(CoordinationError) {
        do {
            let directory = try runtime.lockDirectory()
            for claim in claims {
                let path = claim.lock.path
                var stepper = LockStepper(context: context, owner: owner)
                if !taken.isEmpty { stepper.treeBackOff = backOff }
                let locate = { () -> (LockFile, LockDirectory) in
                    (table.file(for: path, in: directory), directory)
                }
                try take(claim.lock, stepper: stepper, locate: locate)
                #if DEBUG
                if let hook = owner.claimTakenHookForTests.withLock({ $0 }) { hook(path) }
                #endif
                // Decide only now, with the write lock held, whether the item is a directory: it
                // may have been created or moved into place while we waited for that lock (a
                // coordinated mover must hold it to do so), and no `lstat` taken before counts.
                // Nothing there counts as a directory too: a move's destination is usually
                // missing, and the folder moved there brings its items under this path, where an
                // accessor that still holds a lock inside it (a document saving to the place it
                // had before an earlier move) must finish before they land (found by the soak).
                if claim.subtreeIfDirectory && Self.isDirectoryOrMissing(path) {
                    subtrees.insert(path)
                    try take(ItemLock(path: path, access: .tree), stepper: stepper, locate: locate)
                    for inner in Self.descendantLockFiles(of: path, in: directory) {
                        try take(ItemLock(path: inner.key, access: .write), stepper: stepper) {
                            (table.file(for: inner.key, filePath: inner.filePath), directory)
                        }
                    }
                }
            }
        }
    }

    /// Takes one lock through the owner and records it (for `release`).
    private mutating func take(
        _ lock: ItemLock, stepper: LockStepper, locate: () throws(CoordinationError) -> (LockFile, LockDirectory)
    ) throws(CoordinationError) {
        try owner.acquire(lock.access, path: lock.path, stepper: stepper, locate: locate)
        taken.append(lock)
    }

    mutating func release() {
        for lock in taken.reversed() { owner.release(lock.access, on: lock.path) }
        taken.removeAll()
    }

    /// The claims as this thread's record, for deadlock detection while the accessor runs: each
    /// claim's lock, as a tree lock when its whole tree is locked (which covers the items inside).
    func threadRecord() -> [ItemLock] {
        claims.map { claim in
            subtrees.contains(claim.lock.path) ? ItemLock(path: claim.lock.path, access: .tree) : claim.lock
        }
    }

    /// Whether `path` is a directory, or nothing at all (`ENOENT`; a missing folder above it
    /// counts too). A file, a link or an unreadable path is neither.
    private static func isDirectoryOrMissing(_ path: String) -> Bool {
        var info = stat()
        let result = CanonicalPath.withCString(path) { lstat($0, &info) == 0 ? 0 : errno }
        if result == ENOENT || result == ENOTDIR { return result == ENOENT }
        return result == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The lock files of the items inside `directory`, found by listing the mirrored folder.
    /// `key` is the item's canonical path — or, for a component stored hashed because it was too
    /// long, a key no real path can equal (it contains a NUL).
    static func descendantLockFiles(of directory: String, in lockDirectory: LockDirectory) -> [(key: String, filePath: String)] {
        let mirror = LockFileNaming.mirrorDirectory(for: directory, in: lockDirectory.path)
        var result: [(key: String, filePath: String)] = []
        var pending: [(mirror: String, key: String)] = [(mirror, directory)]
        let manager = FileManager.default
        while let (folder, key) = pending.popLast() {
            guard let names = try? manager.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where name != LockFileNaming.lockFileName {
                let component = LockFileNaming.unescape(name) ?? "\u{0}" + name
                let childMirror = folder + "/" + name
                let childKey = CanonicalPath.join(key, component)
                let lockFile = childMirror + "/" + LockFileNaming.lockFileName
                if manager.fileExists(atPath: lockFile) { result.append((childKey, lockFile)) }
                pending.append((childMirror, childKey))
            }
        }
        return result.sorted { $0.key < $1.key }
    }
}
