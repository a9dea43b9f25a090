import Foundation
import SystemSupport

/// What is known of one item's place in the cloud: Apple's `URLResourceValues` ubiquitous-item
/// keys (`ubiquitousItemDownloadingStatus`, `ubiquitousItemIsUploaded`, …), which
/// swift-corelibs-foundation declares but never fills.
public struct UbiquitousItemStatus: Sendable, Hashable {
    /// Apple's `URLUbiquitousItemDownloadingStatus` values, with Apple's raw strings.
    public enum DownloadingStatus: String, Sendable, Hashable {
        /// Only a placeholder is local.
        case notDownloaded = "NSURLUbiquitousItemDownloadingStatusNotDownloaded"
        /// A local copy exists, but it may not be the newest.
        case downloaded = "NSURLUbiquitousItemDownloadingStatusDownloaded"
        /// The local copy is the newest known.
        case current = "NSURLUbiquitousItemDownloadingStatusCurrent"
    }

    /// Whether the item is inside a ubiquity container.
    public var isUbiquitous: Bool
    /// Whether a local copy exists and whether it is the newest known.
    public var downloadingStatus: DownloadingStatus
    /// Whether the provider is bringing the item's contents down now.
    public var isDownloading: Bool
    /// Whether the item's current contents have reached the cloud (see the provider for what it can know).
    public var isUploaded: Bool
    /// Whether the provider is sending the item's contents up now.
    public var isUploading: Bool
    /// 0–100, or `nil` when the provider does not report it.
    public var percentDownloaded: Double?
    /// 0–100, or `nil` when the provider does not report it.
    public var percentUploaded: Double?
    /// Whether unresolved conflict versions of the item exist (`FileVersion`).
    public var hasUnresolvedConflicts: Bool

    /// Whether a local copy exists (downloaded or current): Apple's "is downloaded" test,
    /// `downloadingStatus != .notDownloaded`.
    public var isDownloaded: Bool { downloadingStatus != .notDownloaded }

    /// A status; the defaults describe an item kept whole on this machine and already uploaded.
    public init(isUbiquitous: Bool, downloadingStatus: DownloadingStatus = .current, isDownloading: Bool = false,
                isUploaded: Bool = true, isUploading: Bool = false, percentDownloaded: Double? = nil,
                percentUploaded: Double? = nil, hasUnresolvedConflicts: Bool = false) {
        self.isUbiquitous = isUbiquitous
        self.downloadingStatus = downloadingStatus
        self.isDownloading = isDownloading
        self.isUploaded = isUploaded
        self.isUploading = isUploading
        self.percentDownloaded = percentDownloaded
        self.percentUploaded = percentUploaded
        self.hasUnresolvedConflicts = hasUnresolvedConflicts
    }
}

extension UbiquityAccount {
    /// The container `url` is in, among the configured ones and any folder directly under the
    /// root, or `nil` when it is in none (or signed out). A root reached through a symbolic link is
    /// also recognised by its real path (a metadata query reports real paths). Does not create folders.
    public func containerOfItem(at url: URL) -> UbiquityContainer? {
        guard let configuration = try? configuration(), let root = configuration.root else { return nil }
        let path = url.standardizedFileURL.path
        let rootPath = root.standardizedFileURL.path
        var identifier = Self.containerIdentifier(ofItemAt: path, underRoot: rootPath)
        if identifier == nil, case .success(let realRoot) = PathBytes.realPath(PathBytes.path(of: root)), realRoot != rootPath {
            identifier = Self.containerIdentifier(ofItemAt: path, underRoot: realRoot)
        }
        guard let identifier, identifier != AgentFolder.folderName else { return nil }
        return UbiquityContainer(identifier: identifier, url: root.appending(path: identifier, directoryHint: .isDirectory))
    }

    /// The first component of `path` below `rootPath`, or nil when `path` is not strictly inside it.
    private static func containerIdentifier(ofItemAt path: String, underRoot rootPath: String) -> String? {
        guard UbiquityContainer.path(path, isInside: rootPath), path.count > rootPath.count + 1 else { return nil }
        let relative = path.dropFirst(rootPath.hasSuffix("/") ? rootPath.count : rootPath.count + 1)
        return relative.split(separator: "/").first.map(String.init)
    }

    /// The status of the item at `url`. Outside every container (or signed out):
    /// `isUbiquitous == false` and the rest at its defaults. Inside one, the container's provider
    /// answers (``provider(for:)``; each provider documents what it reports). Any thread. Never
    /// throws: what cannot be learned is reported at its default.
    public func status(ofItemAt url: URL) -> UbiquitousItemStatus {
        guard let container = containerOfItem(at: url) else { return UbiquitousItemStatus(isUbiquitous: false) }
        return provider(for: container).status(ofItemAt: url, in: container)
    }
}
