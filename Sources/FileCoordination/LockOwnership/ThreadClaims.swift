import Foundation
import Glibc

/// What the current thread holds while it runs an accessor, so that a nested coordination that
/// would wait for the thread itself fails at once with `.wouldDeadlock` instead of hanging.
///
/// The claims are the locks of the thread's `AccessorFrames` (each frame's locks, held through
/// its owner): a frame is pushed around every accessor, so keeping a second thread-local list
/// of the same locks cost a second `pthread_getspecific` and array push and pop on every
/// coordinated access for nothing. Only the owning thread reads or writes its frames.
enum ThreadClaims {
    /// True when this thread runs no accessor (holds no coordinated access).
    static var holdsNothing: Bool { AccessorFrames.isEmpty }

    /// Throws `.wouldDeadlock` when this thread holds, through a coordinator of another group, a
    /// lock that conflicts with the one about to be waited for: `path`'s, `exclusive` or shared,
    /// and covering everything inside `path` when `subtree` (a tree byte — taken shared, too, by
    /// the creator of a lock file inside a directory). The group of a claim's owner is looked up
    /// only when a wait is about to start (here).
    static func checkWaitIsSafe(path: String, exclusive: Bool, subtree: Bool, group: LockOwner.GroupKey) throws(CoordinationError) {
        for frame in AccessorFrames.current {
            for held in frame.locks where (held.isExclusive || exclusive) && frame.owner.groupKey != group {
                let overlaps = held.path == path
                    || (held.coversSubtree && CanonicalPath.isInside(path, held.path))
                    || (subtree && CanonicalPath.isInside(held.path, path))
                if overlaps { throw .wouldDeadlock(CanonicalPath.url(for: path)) }
            }
        }
    }
}
