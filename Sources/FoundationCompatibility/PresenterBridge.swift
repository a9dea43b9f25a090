import Foundation
import Synchronization
internal import FileCoordination
internal import CloudDocuments

/// Stands in for one ``NSFilePresenter`` towards FileCoordination, whose `FilePresenter` protocol is
/// `Sendable` (its registry and coordinators call presenters from many threads). The user's object
/// is not `Sendable` and must not have to be, so it is never handed to FileCoordination itself:
/// this bridge is, and it forwards each message to the object.
///
/// `@unchecked Sendable` is justified by the queue discipline Apple's `NSFilePresenter` contract
/// already imposes, which FileCoordination follows:
/// - every message method below is called by FileCoordination on `presentedItemOperationQueue`,
///   which is the user's queue, so the user's methods run where the user expects them to;
/// - `presentedItemURL` and `presentedItemOperationQueue` are read on any thread, exactly as
///   Apple's coordinator reads them; the protocol documents that they must allow it;
/// - `presenter` is a weak reference written once in `init`; loading a weak reference is atomic;
///   `versionStore` is an immutable `Sendable` value.
final class PresenterBridge: FilePresenter, @unchecked Sendable {
    /// The user's presenter; `nil` once it has been deallocated.
    private(set) weak var presenter: (any NSFilePresenter)?

    /// Where messages go once the presenter is gone (they are then answered with the defaults).
    private static let orphanQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "FoundationCompatibility.orphanedPresenter"
        return queue
    }()

    /// The version store the version messages' `NSFileVersion`s are looked up in: the one in
    /// effect where the presenter was first registered or given to a coordinator (the standard
    /// store, unless a test overrode it), since the messages arrive on a queue that task-local
    /// overrides do not reach.
    private let versionStore: VersionStoreScope

    init(_ presenter: any NSFilePresenter) {
        self.presenter = presenter
        versionStore = .current
    }

    var presentedItemURL: URL? { presenter?.presentedItemURL }

    var presentedItemOperationQueue: OperationQueue {
        presenter?.presentedItemOperationQueue ?? Self.orphanQueue
    }

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        guard let presenter else { return reader(nil) }
        presenter.relinquishPresentedItem(toReader: reader)
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        guard let presenter else { return writer(nil) }
        presenter.relinquishPresentedItem(toWriter: writer)
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let presenter else { return completionHandler(nil) }
        presenter.savePresentedItemChanges(completionHandler: completionHandler)
    }

    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let presenter else { return completionHandler(nil) }
        presenter.accommodatePresentedItemDeletion(completionHandler: completionHandler)
    }

    func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let presenter else { return completionHandler(nil) }
        presenter.accommodatePresentedItemEviction(completionHandler: completionHandler)
    }

    func presentedItemDidMove(to newURL: URL) { presenter?.presentedItemDidMove(to: newURL) }
    func presentedItemDidChange() { presenter?.presentedItemDidChange() }
    func presentedSubitemDidAppear(at url: URL) { presenter?.presentedSubitemDidAppear(at: url) }
    func presentedSubitemDidChange(at url: URL) { presenter?.presentedSubitemDidChange(at: url) }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {
        presenter?.presentedSubitem(at: oldURL, didMoveTo: newURL)
    }

    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard let presenter else { return completionHandler(nil) }
        presenter.accommodatePresentedSubitemDeletion(at: url, completionHandler: completionHandler)
    }

    // The version messages: the reference becomes an NSFileVersion, looked up on the presenter's
    // queue when the message is delivered (NSFileVersion.named(by:presentedItemURL:in:)).

    func presentedItemDidGain(_ version: FileVersionReference) {
        guard let presenter else { return }
        presenter.presentedItemDidGain(nsFileVersion(version, for: presenter))
    }

    func presentedItemDidLose(_ version: FileVersionReference) {
        guard let presenter else { return }
        presenter.presentedItemDidLose(nsFileVersion(version, for: presenter))
    }

    func presentedItemDidResolveConflict(_ version: FileVersionReference) {
        guard let presenter else { return }
        presenter.presentedItemDidResolveConflict(nsFileVersion(version, for: presenter))
    }

    private func nsFileVersion(_ reference: FileVersionReference, for presenter: any NSFilePresenter) -> NSFileVersion {
        NSFileVersion.named(by: reference, presentedItemURL: presenter.presentedItemURL, in: versionStore)
    }
}

extension PresenterBridge {
    /// One bridge per live presenter object, so that registering a presenter and creating
    /// `NSFileCoordinator(filePresenter:)` for it use the same identity: that is how a coordinator
    /// knows not to message its own presenter, and how a presenter answering a save request joins
    /// the requester's locks. Bridges are kept (strongly) while their presenter lives; entries of
    /// deallocated presenters are dropped (and unregistered) from time to time.
    private struct Table {
        var bridges: [ObjectIdentifier: PresenterBridge] = [:]
        /// The table's size after the last sweep: the next sweep runs when it has doubled.
        var sizeAfterSweep = 0
    }
    private static let table = Locked(Table())

    /// The bridge for `presenter`, made on first use.
    static func bridge(for presenter: any NSFilePresenter) -> PresenterBridge {
        let key = ObjectIdentifier(presenter)
        let (bridge, orphans) = table.withLock { table -> (PresenterBridge, [PresenterBridge]) in
            // An identifier can be reused by a new object once the old one is gone: check identity.
            if let existing = table.bridges[key], existing.presenter === presenter { return (existing, []) }
            var orphans: [PresenterBridge] = []
            if table.bridges.count >= 2 * table.sizeAfterSweep + 16 {
                for (id, bridge) in table.bridges where bridge.presenter == nil {
                    orphans.append(bridge)
                    table.bridges.removeValue(forKey: id)
                }
                table.sizeAfterSweep = table.bridges.count
            }
            if let replaced = table.bridges[key] { orphans.append(replaced) }
            let bridge = PresenterBridge(presenter)
            table.bridges[key] = bridge
            return (bridge, orphans)
        }
        for orphan in orphans { Coordinator.removeFilePresenter(orphan) }
        return bridge
    }

    /// The bridge already made for `presenter`, if any.
    static func existingBridge(for presenter: any NSFilePresenter) -> PresenterBridge? {
        table.withLock { table in
            guard let bridge = table.bridges[ObjectIdentifier(presenter)], bridge.presenter === presenter else { return nil }
            return bridge
        }
    }
}
