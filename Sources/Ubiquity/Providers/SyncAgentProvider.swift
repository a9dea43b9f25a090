import Foundation
import SystemSupport

/// `provider = agent`: the containers are synced by this package's agent, `clouddocsd`, which may
/// run in another process. Each answer comes from the status the agent publishes in its folder
/// (``AgentFolder``, `ROOT/.clouddocsd/status/IDENTIFIER.json`):
///
/// - an item being transferred is uploading or downloading, with its percent;
/// - an item queued for upload, or changed after the agent's last look (``ContainerSyncStatus/scannedThrough``),
///   is not uploaded; one queued for download is downloaded but not current;
/// - an item the agent holds a conflict for has unresolved conflicts;
/// - any other item is uploaded and current.
///
/// With no agent running (nothing holds `agent.lock`) it reports what is true of a folder no agent
/// serves: items whole on disk (downloaded, current) and **not uploaded** (0 %).
/// Placeholders are not supported yet. Reads never block; any thread.
public struct SyncAgentProvider: UbiquityProvider {
    /// The provider of `provider = agent`.
    public init() {}

    public var kind: UbiquityProviderKind { .agent }
    public var name: String { "the sync agent (clouddocsd)" }
    public var supportsPlaceholders: Bool { false }

    public func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus {
        let folder = AgentFolder(root: container.url.deletingLastPathComponent())
        guard folder.isAgentRunning, let published = folder.status(of: container.identifier),
              let relative = Self.relativePath(of: url, in: container) else {
            return .fullyLocal(itemAt: url, isUploaded: false)
        }
        var status = UbiquitousItemStatus.fullyLocal(itemAt: url, isUploaded: true)
        if published.conflicted.contains(relative) { status.hasUnresolvedConflicts = true }
        if let transfer = published.transfers.first(where: { $0.path == relative }) {
            if transfer.isUpload {
                status.isUploaded = false
                status.isUploading = true
                status.percentUploaded = transfer.percent ?? 0
            } else {
                status.downloadingStatus = .downloaded
                status.isDownloading = true
                status.percentDownloaded = transfer.percent ?? 0
            }
            return status
        }
        if let queued = published.queued.first(where: { $0.path == relative }) {
            switch queued.action {
            case .upload, .deleteRemote, .moveRemote, .conflict:
                status.isUploaded = false
                status.percentUploaded = 0
            case .download, .deleteLocal, .moveLocal:
                status.downloadingStatus = .downloaded
            }
            return status
        }
        if Self.isModified(url, after: published.scannedThrough) {
            status.isUploaded = false
            status.percentUploaded = 0
        }
        return status
    }

    /// `url`'s path inside the container, `/`-separated, or `nil` for the container itself or
    /// an item outside it.
    static func relativePath(of url: URL, in container: UbiquityContainer) -> String? {
        let item = PathBytes.path(of: url.standardizedFileURL)
        let base = PathBytes.path(of: container.url.standardizedFileURL)
        let prefix = base.hasSuffix("/") ? base : base + "/"
        guard item.hasPrefix(prefix), item.count > prefix.count else { return nil }
        var relative = String(item.dropFirst(prefix.count))
        while relative.hasSuffix("/") { relative.removeLast() }
        return relative
    }

    /// Whether the item changed after `date` (true when the agent never looked).
    private static func isModified(_ url: URL, after date: Date?) -> Bool {
        guard let date else { return true }
        guard let info = try? POSIX.linkStatus(PathBytes.path(of: url)) else { return false }
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        return modified > date.timeIntervalSince1970
    }
}
