import Foundation
import Glibc

/// What the current thread holds while it runs an accessor, so that a nested coordination that
/// would wait for the thread itself fails at once with `.wouldDeadlock` instead of hanging.
///
/// Stored in thread-local storage; only the owning thread reads or writes its list.
enum ThreadClaims {
    struct Held {
        let path: String
        let exclusive: Bool
        let subtree: Bool
        /// Whose claim it is: claims of one group (see `LockOwner.groupKey`) never block each other.
        /// The group is looked up only when a wait is about to start.
        let owner: LockOwner
    }

    private final class Box {
        var claims: [Held] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        return key
    }()

    private static func box(creating: Bool) -> Box? {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue()
        }
        guard creating else { return nil }
        let box = Box()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }

    /// Records one claim for the duration of an accessor.
    static func push(_ claim: Held) {
        box(creating: true)?.claims.append(claim)
    }

    /// Records claims for the duration of an accessor.
    static func push(_ claims: [Held]) {
        guard !claims.isEmpty, let box = box(creating: true) else { return }
        box.claims.append(contentsOf: claims)
    }

    /// True when this thread runs no accessor (holds no coordinated access).
    static var holdsNothing: Bool { box(creating: false)?.claims.isEmpty ?? true }

    static func pop(_ count: Int) {
        guard count > 0, let box = box(creating: false) else { return }
        box.claims.removeLast(min(count, box.claims.count))
    }

    /// Throws `.wouldDeadlock` when this thread holds, through a coordinator of another group, an
    /// access that conflicts with the one about to be waited for.
    static func checkWaitIsSafe(path: String, exclusive: Bool, subtree: Bool, group: LockOwner.GroupKey) throws(CoordinationError) {
        guard let box = box(creating: false) else { return }
        for held in box.claims where (held.exclusive || exclusive) && held.owner.groupKey != group {
            let overlaps = held.path == path
                || (held.subtree && CanonicalPath.isInside(path, held.path))
                || (subtree && CanonicalPath.isInside(held.path, path))
            if overlaps { throw .wouldDeadlock(CanonicalPath.url(for: path)) }
        }
    }
}
