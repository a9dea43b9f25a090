import Foundation
import CloudDocuments
import FileCoordination

/// `provider = external` (the default): a sync tool this package does not control — Syncthing,
/// Nextcloud, Dropbox, rclone — keeps the container in sync. ``tool`` names it when
/// ``SyncToolDetection`` found its marker, and is nil otherwise.
///
/// What is reported, and why. These tools expose no per-file state to other programs (Syncthing's
/// REST API needs its API key; the others have none), so the status is read from the folder:
/// - The tools write a file under a temporary name and rename it into place when it is whole, so
///   an item that is there is **downloaded**. When the tool's temporary file for the item sits
///   beside it (`.syncthing.NAME.tmp`, `~syncthing~NAME.tmp`, Nextcloud's `.NAME.~…`, rclone's
///   `NAME.….partial`), a newer copy is arriving: `isDownloading`, status `.downloaded` (or
///   `.notDownloaded` while the item is not there yet), percent unknown (nil). Otherwise the item
///   is reported **current** (100 %).
/// - Whether another device has the item cannot be learned, so it is reported **uploaded**
///   (100 %, not uploading): "nothing this machine knows of is waiting", which keeps code that
///   waits for `isUploaded` from waiting for ever. Do not read it as a promise that other devices
///   have the newest bytes.
/// - Unresolved conflicts: the tool's conflict copies beside the item and stored conflict
///   versions (``FileVersion/unresolvedConflictVersionsOfItem(at:)``).
/// No placeholders: the tools keep every file whole, so evicting and downloading throw
/// ``UbiquityError/providerDoesNotSupportPlaceholders(provider:)``.
public struct ExternalSyncToolProvider: UbiquityProvider {
    /// The detected tool, or nil when none left a marker.
    public let tool: ExternalSyncTool?

    /// A provider for `tool` (nil: a tool that left no marker).
    public init(tool: ExternalSyncTool?) {
        self.tool = tool
    }

    public var kind: UbiquityProviderKind { .externalSyncTool }
    public var name: String { tool?.displayName ?? "an external sync tool" }
    public var supportsPlaceholders: Bool { false }

    public func status(ofItemAt url: URL, in container: UbiquityContainer) -> UbiquitousItemStatus {
        let path = url.standardizedFileURL.path
        let exists = FileManager.default.fileExists(atPath: path)
        guard Self.isBeingTransferred(itemAt: url) else {
            var status = UbiquitousItemStatus.fullyLocal(itemAt: url, isUploaded: true)
            if !exists { status.downloadingStatus = .notDownloaded; status.percentDownloaded = 0 }
            return status
        }
        return UbiquitousItemStatus(isUbiquitous: true, downloadingStatus: exists ? .downloaded : .notDownloaded,
                                    isDownloading: true, isUploaded: true, isUploading: false,
                                    percentDownloaded: nil, percentUploaded: 100,
                                    hasUnresolvedConflicts: UbiquitousItemStatus.hasUnresolvedConflicts(itemAt: url))
    }

    /// Whether a sync tool's temporary file for the item's name is in its folder.
    static func isBeingTransferred(itemAt url: URL) -> Bool {
        let name = url.lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) else { return false }
        return names.contains { candidate in
            guard candidate != name, candidate.contains(name),
                  let item = SyncInternalItems.item(named: candidate), item.kind == .transferTemporary else { return false }
            return candidate == ".syncthing.\(name).tmp" || candidate == "~syncthing~\(name).tmp"
                || candidate.hasPrefix(".\(name).~") || (candidate.hasPrefix("\(name).") && candidate.hasSuffix(".partial"))
                || candidate == "\(name).part" || candidate == "\(name).filepart"
        }
    }
}
