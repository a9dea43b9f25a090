import Foundation

/// Names one other version of an item in the version messages of a ``FilePresenter``
/// (``FilePresenter/presentedItemDidGain(_:)``, ``FilePresenter/presentedItemDidLose(_:)``,
/// ``FilePresenter/presentedItemDidResolveConflict(_:)``).
///
/// FileCoordination does not know the version store (that is CloudDocuments' `FileVersion`), so
/// the messages carry this small value instead: enough to tell versions apart and to get the full
/// `FileVersion` back with `FileVersion.version(itemAt:forPersistentIdentifier:)`, whose
/// identifier's `rawValue` is ``persistentIdentifier``.
public struct FileVersionReference: Sendable, Hashable, CustomStringConvertible {
    /// The item the version belongs to, where it was when the message was sent.
    public let itemURL: URL
    /// Where the version's contents are (inside the version store). May be gone by the time the
    /// message arrives (after a removal, it is).
    public let url: URL
    /// The version's persistent identifier, as a plain string (CloudDocuments'
    /// `FileVersion.PersistentIdentifier.rawValue`).
    public let persistentIdentifier: String
    /// Whether the version is a conflict version.
    public let isConflict: Bool

    /// A reference to the version at `url` of the item at `itemURL`. Never fails; nothing is checked on disk.
    public init(itemURL: URL, url: URL, persistentIdentifier: String, isConflict: Bool) {
        self.itemURL = itemURL
        self.url = url
        self.persistentIdentifier = persistentIdentifier
        self.isConflict = isConflict
    }

    /// A one-line description for logs.
    public var description: String {
        "version \(persistentIdentifier) of \(itemURL.path)\(isConflict ? " (conflict)" : "")"
    }
}

/// What happened to a version of an item: the three version messages of ``FilePresenter``.
package enum FileVersionChange: Sendable, Equatable {
    /// A version was added (`presentedItemDidGain(_:)`).
    case gained(FileVersionReference)
    /// A version was removed (`presentedItemDidLose(_:)`).
    case lost(FileVersionReference)
    /// A conflict version was resolved (`presentedItemDidResolveConflict(_:)`).
    case resolvedConflict(FileVersionReference)
}

extension Coordinator {
    /// Tells every presenter of the item at `url` in this coordinator's runtime — this
    /// coordinator's own presenter included, as Apple does for version messages — that one of its
    /// versions changed. Delivered asynchronously on each presenter's queue; does not wait.
    /// Called by CloudDocuments' `FileVersion` after each change of the version store (inside the
    /// coordinated write of the item). Presenters of the item in other processes are told too
    /// (found with a lookup that waits as this coordinator's `timeout` allows; if it fails they
    /// are not told); the reference names the version in the shared version store, where they
    /// look it up.
    package func announceVersionChange(_ change: FileVersionChange, ofItemAt url: URL) {
        let path = CanonicalPath.of(url, in: runtime.paths)
        let elsewhere = runtime.remote.mayConcern(path)
        guard !runtime.registry.isEmpty || elsewhere else { return }
        let message: PresenterMessage
        switch change {
        case .gained(let version): message = .versionDidGain(version)
        case .lost(let version): message = .versionDidLose(version)
        case .resolvedConflict(let version): message = .versionDidResolveConflict(version)
        }
        for address in runtime.registry.addresses(at: path) {
            runtime.delivery.send(PresenterRequest(presenter: address.id, presentedPath: address.path,
                                                   message: message, borrow: nil), answer: nil)
        }
        guard elsewhere else { return }
        let context = WaitContext(timeout: timeout, token: cancellation)
        let found = (try? runtime.remote.addresses(at: path, context: context)) ?? []
        for address in RemoteFound(found, item: path).item {
            runtime.messengerDelivery.send(PresenterRequest(presenter: address.id, presentedPath: address.path,
                                                            message: message, borrow: nil), answer: nil)
        }
    }
}
