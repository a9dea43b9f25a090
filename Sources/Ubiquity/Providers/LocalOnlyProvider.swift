import Foundation

/// `provider = none`: nothing keeps the container in sync — a single-machine setup, or tests.
///
/// Every item is whole on disk, so it is reported downloaded and current (100 %). It is reported
/// **uploaded** (100 %, never uploading): there is nowhere to upload to, so nothing waits to be
/// uploaded, and code that waits for `isUploaded` before telling the user "saved to the cloud"
/// does not wait for ever. Unresolved conflicts come from the item's versions. No placeholders:
/// evicting and downloading throw ``UbiquityError/providerDoesNotSupportPlaceholders(provider:)``.
public struct LocalOnlyProvider: UbiquityProvider {
    /// The provider of `provider = none`.
    public init() {}

    public var kind: UbiquityProviderKind { .none }
    public var name: String { "no provider (a local folder)" }
    public var supportsPlaceholders: Bool { false }

    public func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus {
        .fullyLocal(itemAt: url, isUploaded: true)
    }
}
