import Foundation

/// `provider = agent` before the sync agent exists: the stand-in used until the agent (a later
/// release) plugs its own provider in with ``UbiquityAccount/setProvider(_:)``.
///
/// It reports what is true of a folder no agent is serving: items are whole on disk (downloaded,
/// current) and **not uploaded** (0 %, not uploading) — nothing has carried them anywhere yet.
/// Placeholders are not supported until an agent that makes them is plugged in.
public struct SyncAgentProvider: UbiquityProvider {
    /// The stand-in used until an agent is plugged in (`UbiquityAccount.setProvider(_:)`).
    public init() {}

    public var kind: UbiquityProviderKind { .agent }
    public var name: String { "the sync agent (not running: no agent is plugged in)" }
    public var supportsPlaceholders: Bool { false }

    public func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus {
        .fullyLocal(itemAt: url, isUploaded: false)
    }
}
