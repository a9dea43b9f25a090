import Foundation
import FileCoordination
import SystemSupport

extension UbiquityAccount {
    /// Deletes the document at `url` — local or in the cloud, a file or a folder (a package) with
    /// everything inside it — in a coordinated write with `.forDeleting`, as Apple's guides
    /// delete a document: every presenter of the item (or of an item inside it), in this process
    /// and in others, is asked to accommodate the deletion first — an open `CloudDocument` closes —
    /// and presenters of the folders around hear of it; then the item is removed. A sync tool
    /// then carries the deletion to other devices.
    ///
    /// **Threading:** the calling task suspends while the coordination waits for presenters; the
    /// wait and the removal run on a thread of their own, so any actor (the main actor
    /// included) may call it. Cancelling the task while it waits ends it with
    /// `.coordinationFailed` and nothing deleted.
    ///
    /// - Throws: `.itemNotFound` when nothing is at `url`; `.coordinationFailed` when the
    ///   coordination was refused (a presenter vetoed the deletion), timed out or was cancelled —
    ///   nothing was deleted; `.removeFailed(path:errno:)` when the removal failed (a folder may
    ///   then have lost part of its contents).
    public func removeItem(at url: URL) async throws(UbiquityError) {
        let item = try Self.itemToRemove(url)
        let coordinator = Coordinator()
        do {
            try await coordinator.coordinate(with: [.writingIntent(with: item, options: .forDeleting)]) { granted throws -> Void in
                try Self.performRemoval(granted[0].url)
            }
        } catch {
            throw Self.removalError(error, item: item)
        }
    }

    /// ``removeItem(at:)``, blocking the calling thread until the item is deleted: for threads of
    /// your own and dispatch queues that may wait. Same deletion, same errors.
    ///
    /// **Threading:** never on the main thread or main actor — a presenter answering there would
    /// deadlock — and unavailable from asynchronous contexts: `await` ``removeItem(at:)`` there.
    @available(*, noasync, message: "it blocks while presenters answer: use `await removeItem(at:)`")
    public func removeItemBlocking(at url: URL) throws(UbiquityError) {
        let item = try Self.itemToRemove(url)
        do {
            try Coordinator().coordinate(writingItemAt: item, options: .forDeleting) { granted in
                try Self.performRemoval(granted)
            }
        } catch {
            throw Self.removalError(error, item: item)
        }
    }

    /// The standardized URL of an item that exists.
    private static func itemToRemove(_ url: URL) throws(UbiquityError) -> URL {
        let item = url.standardizedFileURL
        guard itemExists(item) else { throw .itemNotFound(path: item.path) }
        return item
    }

    /// Inside the coordinated write: removes the item (its trailing `/`, if any, ignored).
    private static func performRemoval(_ url: URL) throws(UbiquityError) {
        let path = ItemTree.withoutTrailingSlashes(PathBytes.path(of: url))
        guard itemExists(url) else { throw .itemNotFound(path: url.path) }
        if let error = ItemTree.remove(path) { throw .removeFailed(path: url.path, errno: error) }
        if let (folder, _) = ItemTree.split(path) { _ = ItemTree.syncFolder(folder) }
    }

    private static func removalError(_ error: any Error, item: URL) -> UbiquityError {
        if let error = error as? UbiquityError { return error }
        return .coordinationFailed(path: item.path, underlying: CoordinationError(thrownByCoordinating: error))
    }
}
