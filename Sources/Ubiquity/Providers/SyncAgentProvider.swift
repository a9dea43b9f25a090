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
/// An evicted item (only its placeholder is here, ``ItemPlaceholder``) is not downloaded, or
/// downloading with its percent while the agent brings it back.
///
/// With no agent running (nothing holds `agent.lock`) it reports what is true of a folder no agent
/// serves: items whole on disk (downloaded, current) and **not uploaded** (0 %).
/// Evicting and downloading go through the agent (``evictItem(at:in:)``,
/// ``startDownloadingItem(at:in:)``). Status reads never block; any thread.
public struct SyncAgentProvider: UbiquityProvider {
    /// The provider of `provider = agent`.
    public init() {}

    public var kind: UbiquityProviderKind { .agent }
    public var name: String { "the sync agent (clouddocsd)" }
    public var supportsPlaceholders: Bool { true }

    /// How long ``evictItem(at:in:)`` waits for the agent's answer.
    static let evictionAnswerTimeout: Duration = .seconds(120)

    /// Asks the agent to evict the item (files on demand) and waits for its answer: the agent
    /// does it inside a coordinated write, so open documents in every process save first and
    /// step aside. Blocks the calling thread (never longer than two minutes) — call it off the
    /// main actor.
    ///
    /// - Throws: ``UbiquityError/evictionRefused(path:reason:)`` when the agent is not running,
    ///   does not answer in time, or refuses (the item is not uploaded yet, has unsaved changes or
    ///   unresolved conflicts, is a folder); ``UbiquityError/itemNotFound(path:)`` when nothing is
    ///   there; `.containerUnavailable` when the request cannot be left.
    public func evictItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError) {
        let path = url.standardizedFileURL.path
        guard let relative = Self.relativePath(of: url, in: container) else { throw .itemNotInContainer(path: path) }
        if Self.isEvicted(url) { return }
        guard (try? POSIX.linkStatus(SystemPath(fileURL: url))) ?? nil != nil else { throw .itemNotFound(path: path) }
        let folder = AgentFolder(root: container.url.deletingLastPathComponent())
        guard folder.isAgentRunning else {
            throw .evictionRefused(path: path, reason: "the sync agent (clouddocsd) is not running, so nothing can say the item is uploaded")
        }
        let request = AgentRequest(command: .evict, container: container.identifier, path: relative)
        try folder.send(request)
        let deadline = ContinuousClock.now + Self.evictionAnswerTimeout
        while ContinuousClock.now < deadline {
            if let status = folder.status(of: container.identifier), status.handledRequests.contains(request.id) {
                if let reason = status.refusedRequests?[request.id] { throw .evictionRefused(path: path, reason: reason) }
                return
            }
            guard folder.isAgentRunning else { throw .evictionRefused(path: path, reason: "the sync agent stopped before it answered") }
            // The agent answers within one of its turns; a short bounded poll of its status file.
            usleep(20_000)
        }
        throw .evictionRefused(path: path, reason: "the sync agent did not answer within two minutes")
    }

    /// Asks the agent to download the evicted item — or, for a folder, every evicted item inside
    /// it — and returns at once (watch its status or a metadata query). A file already here is
    /// left alone. Without a running agent the request waits in the agent's folder for its next
    /// start.
    ///
    /// - Throws: ``UbiquityError/itemNotFound(path:)`` when neither the item nor its placeholder
    ///   is there; `.containerUnavailable` when the request cannot be left.
    public func startDownloadingItem(at url: URL, in container: UbiquityContainer) throws(UbiquityError) {
        let path = url.standardizedFileURL.path
        guard let relative = Self.relativePath(of: url, in: container) else { throw .itemNotInContainer(path: path) }
        guard Self.isEvicted(url) else {
            guard let info = (try? POSIX.linkStatus(SystemPath(fileURL: url))) ?? nil else { throw .itemNotFound(path: path) }
            // A file is here: nothing to do. A folder: the agent downloads what is evicted inside.
            guard (info.st_mode & S_IFMT) == S_IFDIR else { return }
            try AgentFolder(root: container.url.deletingLastPathComponent())
                .send(AgentRequest(command: .download, container: container.identifier, path: relative))
            return
        }
        try AgentFolder(root: container.url.deletingLastPathComponent())
            .send(AgentRequest(command: .download, container: container.identifier, path: relative))
    }

    public func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus {
        let folder = AgentFolder(root: container.url.deletingLastPathComponent())
        let evicted = Self.isEvicted(url)
        guard folder.isAgentRunning, let published = folder.status(of: container.identifier),
              let relative = Self.relativePath(of: url, in: container) else {
            // An evicted item was uploaded before it was evicted.
            var status = UbiquitousItemStatus.fullyLocal(itemAt: url, isUploaded: evicted)
            if evicted { status.downloadingStatus = .notDownloaded; status.percentDownloaded = 0 }
            return status
        }
        var status = UbiquitousItemStatus.fullyLocal(itemAt: url, isUploaded: true)
        if published.conflicted.contains(relative) { status.hasUnresolvedConflicts = true }
        if evicted {
            status.downloadingStatus = .notDownloaded
            status.percentDownloaded = 0
            if let transfer = published.transfers.first(where: { $0.path == relative && !$0.isUpload }) {
                status.isDownloading = true
                status.percentDownloaded = transfer.percent ?? 0
            }
            return status
        }
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

    /// Whether only the item's placeholder is here (``ItemPlaceholder``): it was evicted.
    static func isEvicted(_ url: URL) -> Bool {
        guard (try? POSIX.linkStatus(SystemPath(fileURL: url))) ?? nil == nil else { return false }
        return (try? ItemPlaceholder.read(forItemAt: url)) ?? nil != nil
    }

    /// Whether the item changed after `date` (true when the agent never looked).
    private static func isModified(_ url: URL, after date: Date?) -> Bool {
        guard let date else { return true }
        guard let info = try? POSIX.linkStatus(PathBytes.path(of: url)) else { return false }
        let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        return modified > date.timeIntervalSince1970
    }
}
