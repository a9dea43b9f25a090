import Foundation
import Glibc

/// The coordinated accesses whose accessors the current thread is running, innermost last: for
/// each, the coordinator, the lock owner its locks are held through and the locks (as
/// `ThreadClaims` records them). A call made from inside an accessor — `FileVersion` resolving a
/// conflict inside the coordinated write Apple's recipe wraps it in — finds here the access it
/// runs in and joins it (``Coordinator/joiningCurrentAccess(to:)``) instead of waiting for it.
///
/// Stored in thread-local storage; only the owning thread reads or writes its frames. Pushed and
/// popped by `CoordinatedAccess.run` and the fast path, around the accessor only. The frames'
/// locks are also the thread's claims (`ThreadClaims`, deadlock detection).
enum AccessorFrames {
    /// One accessor running on this thread.
    struct Frame {
        let coordinator: Coordinator
        let owner: LockOwner
        /// The locks of the access: one (the fast path), or the claims' records.
        let single: ItemLock?
        let several: [ItemLock]

        /// Whether these locks hold the item whose lock is taken on `lockPath` (a canonical
        /// path: the item, or the package containing it): the same path, or a folder whose whole
        /// tree is locked.
        func holds(_ lockPath: String) -> Bool {
            if let single { return Self.lock(single, holds: lockPath) }
            return several.contains { Self.lock($0, holds: lockPath) }
        }

        /// The locks of the access (`ThreadClaims` checks waits against them).
        var locks: [ItemLock] {
            if let single { return [single] }
            return several
        }

        private static func lock(_ lock: ItemLock, holds lockPath: String) -> Bool {
            lock.path == lockPath || (lock.coversSubtree && CanonicalPath.isInside(lockPath, lock.path))
        }
    }

    private static let frames = ThreadLocalList<Frame>()

    /// Records an accessor about to run with one lock held through `owner`.
    static func push(_ coordinator: Coordinator, owner: LockOwner, lock: ItemLock) {
        frames.append(Frame(coordinator: coordinator, owner: owner, single: lock, several: []))
    }

    /// Records an accessor about to run with `locks` held through `owner`.
    static func push(_ coordinator: Coordinator, owner: LockOwner, locks: [ItemLock]) {
        frames.append(Frame(coordinator: coordinator, owner: owner, single: nil, several: locks))
    }

    /// Forgets the innermost accessor (it returned).
    static func pop() {
        frames.removeLast()
    }

    /// The accessors running on this thread, innermost last (empty outside every accessor).
    static var current: [Frame] { frames.elements }

    /// True when this thread runs no accessor.
    static var isEmpty: Bool { frames.isEmpty }
}
