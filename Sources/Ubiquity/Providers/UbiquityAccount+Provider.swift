import Foundation
import FileCoordination

/// What an account keeps beside its configuration: the plugged-in provider, the sync tools
/// detected per container folder, and the identity watcher. Each field behind its own lock.
final class AccountExtras: Sendable {
    let pluggedProvider = Locked<(any UbiquityProvider)?>(nil)
    /// Container folder path → the detected tool (nil: none found). Detection reads folders, so it
    /// runs once per container folder per account.
    let detectedTools = Locked<[String: ExternalSyncTool?]>([:])
    let identity = IdentityWatchState()
}

extension UbiquityAccount {
    /// Plugs `provider` in for every container of this account, whatever the configuration says
    /// (`nil` goes back to the configured kind). The sync agent (a later release) plugs itself in
    /// here; tests plug in providers with placeholders. Any thread.
    public func setProvider(_ provider: (any UbiquityProvider)?) {
        extras.pluggedProvider.withLock { $0 = provider }
    }

    /// The provider that keeps `container` in sync: the plugged-in one, else the configured kind
    /// (`none` → ``LocalOnlyProvider``, `external` → ``ExternalSyncToolProvider`` with the tool
    /// detected from marker files in the container folder or above it, `agent` →
    /// ``SyncAgentProvider`` until an agent is plugged in). Any thread.
    public func provider(for container: UbiquityContainer) -> any UbiquityProvider {
        if let plugged = extras.pluggedProvider.withLock({ $0 }) { return plugged }
        let kind = (try? configuration())?.provider ?? .externalSyncTool
        switch kind {
        case .none: return LocalOnlyProvider()
        case .agent: return SyncAgentProvider()
        case .externalSyncTool:
            let key = container.url.standardizedFileURL.path
            if let known = extras.detectedTools.withLock({ $0[key] }) { return ExternalSyncToolProvider(tool: known) }
            let tool = SyncToolDetection.detect(syncing: container.url)?.tool
            extras.detectedTools.withLock { $0[key] = .some(tool) }
            return ExternalSyncToolProvider(tool: tool)
        }
    }
}
