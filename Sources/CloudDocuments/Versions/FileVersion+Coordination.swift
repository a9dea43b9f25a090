import Foundation

extension FileVersion {
    /// Runs `body` inside a coordinated write of the item at `url` (with `coordinator`, or a new
    /// one), passing the URL the coordinator hands out (the item's place if it moved while we
    /// waited). Coordination failures become ``FileVersionError/coordinationFailed(_:description:)``.
    static func coordinatedWrite<T>(
        _ url: URL, options: Coordinator.WritingOptions = [], coordinator: Coordinator?,
        _ body: (URL) throws(FileVersionError) -> T
    ) throws(FileVersionError) -> T {
        var outcome: Result<T, FileVersionError>?
        do {
            try (coordinator ?? Coordinator()).coordinate(writingItemAt: url, options: options) { actualURL in
                do throws(FileVersionError) { outcome = .success(try body(actualURL)) } catch { outcome = .failure(error) }
            }
        } catch {
            throw .coordinationFailed(url, description: String(describing: error))
        }
        guard let outcome else { throw .coordinationFailed(url, description: "the accessor did not run") }
        return try outcome.get()
    }
}
