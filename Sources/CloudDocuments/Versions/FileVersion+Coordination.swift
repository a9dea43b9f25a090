import FileCoordination
import Foundation

extension FileVersion {
    /// The coordinator a change of the versions of the item at `url` uses: the one given; else,
    /// when the calling thread runs the accessor of a coordinated access that holds the item (Apple's
    /// recipe: resolve "from a block passed to a file coordinator"), one that joins that access
    /// (`Coordinator.joiningCurrentAccess(to:)`: its locks are reused, never waited for); else a
    /// new one.
    static func coordinator(forItemAt url: URL, given: Coordinator?) -> Coordinator {
        given ?? Coordinator.joiningCurrentAccess(to: url) ?? Coordinator()
    }

    /// Runs `body` inside a coordinated write of the item at `url` (with `coordinator`, or one
    /// that joins the access the calling thread runs in, or a new one: see
    /// ``coordinator(forItemAt:given:)``), passing the URL the coordinator hands out (the item's
    /// place if it moved while we waited). Coordination failures become
    /// ``FileVersionError/coordinationFailed(_:underlying:)``.
    ///
    /// When `body` succeeds, the version messages `announce` returns for its result are sent to
    /// every presenter of the item in this process (the coordinator's own included), still inside
    /// the write: see ``announce(_:ofItemAt:with:)``.
    ///
    /// `alsoWriting` adds a second item (a conflict copy being deleted or moved: its presenters and
    /// the change monitor then know who changed it), locked *after* the item, inside its access.
    ///
    /// Never hangs. The lock order of every version change is: the item, then its conflict
    /// copies. Locks the calling thread's own access already holds are counted, not waited for.
    /// The one wait that holds a lock while waiting for another — a copy's, with the item held —
    /// goes through `Coordinator.joiningCurrentAccess(to:)`, whose coordinator waits at most the
    /// caller's timeout or `Coordinator.joinedAccessWaitLimit`: a cycle through it (another
    /// process deleting the folder of both locks the copy, then waits for the item) ends with
    /// `coordinationFailed` instead of hanging. Version changes among themselves never form a
    /// cycle: they all lock in the same order.
    static func coordinatedWrite<T>(
        _ url: URL, options: Coordinator.WritingOptions = [],
        alsoWriting other: (url: URL, options: Coordinator.WritingOptions)? = nil, coordinator: Coordinator?,
        announce messages: (T, URL) -> [FileVersionChange] = { _, _ in [] },
        _ body: (URL) throws(FileVersionError) -> T
    ) throws(FileVersionError) -> T {
        var outcome: Result<T, FileVersionError>?
        let coordinator = Self.coordinator(forItemAt: url, given: coordinator)
        func accessor(_ actualURL: URL) {
            do throws(FileVersionError) {
                let result = try body(actualURL)
                outcome = .success(result)
                announce(messages(result, actualURL), ofItemAt: actualURL, with: coordinator)
            } catch { outcome = .failure(error) }
        }
        do {
            try coordinator.coordinate(writingItemAt: url, options: options) { actualURL in
                guard let other else { return accessor(actualURL) }
                let inner = Coordinator.joiningCurrentAccess(to: actualURL) ?? coordinator
                do {
                    try inner.coordinate(writingItemAt: other.url, options: other.options) { _ in accessor(actualURL) }
                } catch {
                    outcome = .failure(.coordinationFailed(other.url, underlying: CoordinationError(thrownByCoordinating: error)))
                }
            }
        } catch {
            throw .coordinationFailed(url, underlying: CoordinationError(thrownByCoordinating: error))
        }
        guard let outcome else { throw .coordinationFailed(url, underlying: .invalidRequest("the accessor did not run")) }
        return try outcome.get()
    }

    /// Sends version messages (`presentedItemDidGain(_:)`, `…DidLose(_:)`,
    /// `…DidResolveConflict(_:)`) to the presenters of the item at `url` through `coordinator`'s
    /// runtime. Asynchronous; never waits for the presenters.
    static func announce(_ changes: [FileVersionChange], ofItemAt url: URL, with coordinator: Coordinator) {
        for change in changes { coordinator.announceVersionChange(change, ofItemAt: url) }
    }

    /// This version as the version messages of `FilePresenter` name it.
    func reference(itemURL: URL) -> FileVersionReference {
        FileVersionReference(itemURL: itemURL, url: url, persistentIdentifier: persistentIdentifier.rawValue,
                             isConflict: isConflict)
    }
}
