import FileCoordination
import Foundation

extension FileVersion {
    /// Runs `body` inside a coordinated write of the item at `url` (with `coordinator`, or a new
    /// one), passing the URL the coordinator hands out (the item's place if it moved while we
    /// waited). Coordination failures become ``FileVersionError/coordinationFailed(_:description:)``.
    ///
    /// When `body` succeeds, the version messages `announce` returns for its result are sent to
    /// every presenter of the item in this process (the coordinator's own included), still inside
    /// the write: see ``announce(_:ofItemAt:with:)``.
    ///
    /// `alsoWriting` adds a second item to the same coordinated access (a conflict copy being
    /// deleted or moved: its presenters and the change monitor then know who changed it).
    static func coordinatedWrite<T>(
        _ url: URL, options: Coordinator.WritingOptions = [],
        alsoWriting other: (url: URL, options: Coordinator.WritingOptions)? = nil, coordinator: Coordinator?,
        announce messages: (T, URL) -> [FileVersionChange] = { _, _ in [] },
        _ body: (URL) throws(FileVersionError) -> T
    ) throws(FileVersionError) -> T {
        var outcome: Result<T, FileVersionError>?
        let coordinator = coordinator ?? Coordinator()
        func accessor(_ actualURL: URL) {
            do throws(FileVersionError) {
                let result = try body(actualURL)
                outcome = .success(result)
                announce(messages(result, actualURL), ofItemAt: actualURL, with: coordinator)
            } catch { outcome = .failure(error) }
        }
        do {
            if let other {
                try coordinator.coordinate(writingItemAt: url, options: options,
                                           writingItemAt: other.url, options: other.options) { actualURL, _ in accessor(actualURL) }
            } else {
                try coordinator.coordinate(writingItemAt: url, options: options) { actualURL in accessor(actualURL) }
            }
        } catch {
            throw .coordinationFailed(url, description: String(describing: error))
        }
        guard let outcome else { throw .coordinationFailed(url, description: "the accessor did not run") }
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
