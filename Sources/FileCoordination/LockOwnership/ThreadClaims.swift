import Foundation
import Glibc

/// What the current thread holds while it runs an accessor, so that a nested coordination that
/// would wait for the thread itself fails at once with `.wouldDeadlock` instead of hanging.
///
/// Stored in thread-local storage; only the owning thread reads or writes its list.
enum ThreadClaims {
    /// One lock the thread holds, and through whom: claims of one group (see
    /// `LockOwner.groupKey`) never block each other. The group is looked up only when a wait is
    /// about to start.
    private struct Claim {
        let lock: ItemLock
        let owner: LockOwner
    }

    private static let claims = ThreadLocalList<Claim>()

    /// Records one lock, held through `owner`, for the duration of an accessor.
    static func push(_ lock: ItemLock, owner: LockOwner) {
        claims.append(Claim(lock: lock, owner: owner))
    }

    /// Records locks, all held through `owner`, for the duration of an accessor.
    static func push(_ locks: [ItemLock], owner: LockOwner) {
        guard !locks.isEmpty else { return }
        claims.append(contentsOf: locks.lazy.map { Claim(lock: $0, owner: owner) })
    }

    /// True when this thread runs no accessor (holds no coordinated access).
    static var holdsNothing: Bool { claims.isEmpty }

    /// Forgets the last `count` records (those of an accessor that returned).
    static func pop(_ count: Int) {
        claims.removeLast(count)
    }

    /// Throws `.wouldDeadlock` when this thread holds, through a coordinator of another group, a
    /// lock that conflicts with the one about to be waited for: `path`'s, `exclusive` or shared,
    /// and covering everything inside `path` when `subtree` (a tree byte — taken shared, too, by
    /// the creator of a lock file inside a directory).
    static func checkWaitIsSafe(path: String, exclusive: Bool, subtree: Bool, group: LockOwner.GroupKey) throws(CoordinationError) {
        for claim in claims.elements where (claim.lock.isExclusive || exclusive) && claim.owner.groupKey != group {
            let held = claim.lock
            let overlaps = held.path == path
                || (held.coversSubtree && CanonicalPath.isInside(path, held.path))
                || (subtree && CanonicalPath.isInside(held.path, path))
            if overlaps { throw .wouldDeadlock(CanonicalPath.url(for: path)) }
        }
    }
}
