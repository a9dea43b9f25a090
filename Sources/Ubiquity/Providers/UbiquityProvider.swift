import Foundation

/// What keeps a ubiquity container in sync with other devices, and so what can be said about
/// each item's place in the cloud.
///
/// Three kinds exist (``UbiquityProviderKind``):
/// - ``LocalOnlyProvider`` (`provider = none`): nothing syncs the folder;
/// - ``ExternalSyncToolProvider`` (`provider = external`, the default): Syncthing, Nextcloud,
///   Dropbox or rclone keeps the folder in sync, detected from their marker files when possible;
/// - the sync agent (`provider = agent`): implemented by a later release behind this protocol;
///   until one is plugged in with ``UbiquityAccount/setProvider(_:)``, ``SyncAgentProvider``
///   stands in for it.
///
/// A provider answers the status questions of Apple's ubiquitous-item resource keys for one item
/// (``status(ofItemAt:in:)``) and performs the placeholder operations (evict, start
/// downloading). The account asks the provider of the container an item is in; an app or a test
/// may plug in its own with ``UbiquityAccount/setProvider(_:)``.
///
/// Thread safety: a provider is `Sendable`; every requirement may be called from any thread,
/// and several at once.
public protocol UbiquityProvider: Sendable {
    /// The kind of provider (`none`, `external`, `agent`).
    var kind: UbiquityProviderKind { get }
    /// What keeps the container in sync, for messages: "Syncthing", "an external sync tool", …
    var name: String { get }
    /// Whether items can be placeholders (in the cloud, not downloaded): only then are
    /// ``evictItem(at:in:)`` and ``startDownloadingItem(at:in:)`` meaningful.
    var supportsPlaceholders: Bool { get }

    /// The status of the item at `url`, which is inside `container`. Never throws: what cannot be
    /// learned is reported at the value this provider documents.
    func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus

    /// Drops the local copy of the item at `url` (inside `container`), keeping it in the cloud.
    /// - Throws: ``UbiquityError/providerDoesNotSupportPlaceholders(provider:)`` for providers
    ///   without placeholders (the default implementation), or the provider's own errors.
    func evictItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError)

    /// Starts downloading the item at `url` (inside `container`); returns without waiting.
    /// - Throws: ``UbiquityError/providerDoesNotSupportPlaceholders(provider:)`` for providers
    ///   without placeholders (the default implementation), or the provider's own errors.
    func startDownloadingItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError)
}

extension UbiquityProvider {
    public func evictItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError) {
        throw .providerDoesNotSupportPlaceholders(provider: name)
    }

    public func startDownloadingItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError) {
        throw .providerDoesNotSupportPlaceholders(provider: name)
    }
}

extension UbiquitousItemStatus {
    /// The status of an item kept whole on this machine by a provider without placeholders:
    /// downloaded and current (100 %), uploaded as `isUploaded` says, and with unresolved
    /// conflicts when ``FileVersion/unresolvedConflictVersionsOfItem(at:)`` lists any (stored
    /// conflict versions and sync tools' conflict copies beside it).
    public static func fullyLocal(itemAt url: URL, isUploaded: Bool) -> UbiquitousItemStatus {
        UbiquitousItemStatus(isUbiquitous: true, downloadingStatus: .current, isDownloading: false,
                             isUploaded: isUploaded, isUploading: false, percentDownloaded: 100,
                             percentUploaded: isUploaded ? 100 : 0,
                             hasUnresolvedConflicts: hasUnresolvedConflicts(itemAt: url))
    }

    /// Whether unresolved conflict versions of the item at `url` exist (false when the item
    /// cannot be asked, for example because it is missing).
    public static func hasUnresolvedConflicts(itemAt url: URL) -> Bool {
        (try? FileVersion.unresolvedConflictVersionsOfItem(at: url))?.isEmpty == false
    }
}
