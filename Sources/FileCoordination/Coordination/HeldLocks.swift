import Foundation
import Glibc

/// The locks taken for one coordinated access, in the order taken, so they can be given back in
/// reverse. Claims are always taken in path order, which keeps two multi-item coordinations from
/// deadlocking each other.
struct HeldLocks: Sendable {
    let owner: LockOwner
    private(set) var taken: [(path: String, access: LockOwner.Access)] = []
    let claims: [LockClaim]
    /// The claims' paths whose whole tree is locked (decided once each claim's write lock is held).
    private(set) var subtrees: Set<String> = []

    /// Takes every claim, waiting as `context` allows. On failure nothing stays held.
    static func acquire(
        _ claims: [LockClaim], owner: LockOwner, context: WaitContext, runtime: CoordinationRuntime
    ) throws(CoordinationError) -> HeldLocks {
        var held = HeldLocks(owner: owner, claims: claims)
        let table = runtime.lockTable
        do {
            let directory = try runtime.lockDirectory()
            let stepper = LockStepper(context: context, owner: owner)
            for claim in claims {
                let locate = { () -> (LockFile, LockDirectory) in
                    (table.file(for: claim.path, in: directory), directory)
                }
                let access: LockOwner.Access = claim.exclusive ? .write : .read
                try owner.acquire(access, path: claim.path, stepper: stepper, locate: locate)
                held.taken.append((claim.path, access))
                // Decide only now, with the write lock held, whether the item is a directory: it
                // may have been created or moved into place while we waited for that lock (a
                // coordinated mover must hold it to do so), and no `lstat` taken before counts.
                if claim.subtreeIfDirectory && isDirectory(claim.path) {
                    held.subtrees.insert(claim.path)
                    try owner.acquire(.tree, path: claim.path, stepper: stepper, locate: locate)
                    held.taken.append((claim.path, .tree))
                    for inner in descendantLockFiles(of: claim.path, in: directory) {
                        try owner.acquire(.write, path: inner.key, stepper: stepper) {
                            (table.file(for: inner.key, filePath: inner.filePath), directory)
                        }
                        held.taken.append((inner.key, .write))
                    }
                }
            }
        } catch {
            held.release()
            throw error
        }
        return held
    }

    mutating func release() {
        for (path, access) in taken.reversed() { owner.release(access, on: path) }
        taken.removeAll()
    }

    /// The claims as this thread's record, for deadlock detection while the accessor runs.
    func threadRecord() -> [ThreadClaims.Held] {
        claims.map { ThreadClaims.Held(path: $0.path, exclusive: $0.exclusive, subtree: subtrees.contains($0.path), owner: owner) }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return CanonicalPath.withCString(path) { lstat($0, &info) } == 0 && (info.st_mode & S_IFMT) == S_IFDIR
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
