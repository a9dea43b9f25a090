import Foundation

extension Coordinator {
    /// The longest a coordinator made by ``joiningCurrentAccess(to:)`` waits, when the access it
    /// joins has no ``timeout`` of its own.
    ///
    /// Why a bound: the joined access already holds its item, and a call inside it may need to
    /// lock *another* item as well (a version change deleting a sync tool's conflict copy beside
    /// the item). Taking a second lock while holding the first is outside the path order that
    /// keeps coordinations from waiting for each other in a cycle — for example, another process
    /// deleting the folder of both holds the copy's lock and waits for the item's. Every such
    /// wait therefore ends, at the latest after this long, with ``CoordinationError/timedOut``
    /// (the joined access then goes on, and releases its item when its accessor returns). A wait
    /// for locks the joined access holds already never happens: they are counted, not waited for.
    package static let joinedAccessWaitLimit: Duration = .seconds(30)

    /// A coordinator that joins the coordinated access the calling thread is running the accessor
    /// of, when that access holds the item at `url` — the item itself, the package containing
    /// it, or a folder around it that a delete, move or replace locks with everything inside; nil
    /// when the thread runs no such accessor. The innermost such access is joined.
    ///
    /// Apple's recipes change an item's versions "from a block passed to a file coordinator":
    /// code that coordinates on its own behalf (CloudDocuments' `FileVersion`) uses this instead
    /// of a new coordinator, which would have to wait for the access the thread itself holds
    /// (and fail with ``CoordinationError/wouldDeadlock(_:)``).
    ///
    /// The coordinator returned acts like a nested call on the joined one: it uses the same lock
    /// owner (the locks already held are counted, never waited for), the same runtime, and the
    /// same file presenter (which is therefore not messaged). Its ``timeout`` is the joined
    /// coordinator's, or ``joinedAccessWaitLimit`` when that has none. Use it only inside the
    /// accessor that was running when it was made, on the same thread, and do not change its
    /// ``purposeIdentifier``.
    ///
    /// Cost: nothing outside accessors (one thread-local load); inside, one canonical-path
    /// resolution of `url` per runtime among the running accessors.
    package static func joiningCurrentAccess(to url: URL) -> Coordinator? {
        let frames = AccessorFrames.current
        guard !frames.isEmpty, url.isFileURL else { return nil }
        var resolved: [ObjectIdentifier: String] = [:]
        for frame in frames.reversed() {
            let runtime = frame.coordinator.runtime
            let lockPath: String
            if let known = resolved[ObjectIdentifier(runtime)] {
                lockPath = known
            } else {
                let itemPath = CanonicalPath.of(url, in: runtime.paths)
                lockPath = runtime.packageExtensions.outermostPackage(containing: itemPath) ?? itemPath
                resolved[ObjectIdentifier(runtime)] = lockPath
            }
            if frame.holds(lockPath) {
                return Coordinator(joining: frame, timeout: frame.coordinator.timeout ?? joinedAccessWaitLimit)
            }
        }
        return nil
    }
}
