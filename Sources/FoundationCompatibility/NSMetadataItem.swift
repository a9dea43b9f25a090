import Foundation
internal import Ubiquity

// Apple's attribute keys (the strings are Apple's). Every key a result answers is in
// `NSMetadataItem.attributes`.
/// The file name (`String`).
public let NSMetadataItemFSNameKey = "kMDItemFSName"
/// The name without its extension (`String`).
public let NSMetadataItemDisplayNameKey = "kMDItemDisplayName"
/// The item's file URL (`URL`).
public let NSMetadataItemURLKey = "kMDItemURL"
/// The item's path (`String`).
public let NSMetadataItemPathKey = "kMDItemPath"
/// The size in bytes (`NSNumber`).
public let NSMetadataItemFSSizeKey = "kMDItemFSSize"
/// The creation (birth) date where the file system records it (`Date`).
public let NSMetadataItemFSCreationDateKey = "kMDItemFSCreationDate"
/// The modification date (`Date`).
public let NSMetadataItemFSContentChangeDateKey = "kMDItemFSContentChangeDate"
/// The type identifier derived from the extension (`String`).
public let NSMetadataItemContentTypeKey = "kMDItemContentType"
/// Whether the item is in a ubiquity container (`NSNumber`, Boolean).
public let NSMetadataItemIsUbiquitousKey = "NSMetadataItemIsUbiquitousKey"
/// Whether sync-tool conflict copies of the item exist beside it (`NSNumber`, Boolean).
public let NSMetadataUbiquitousItemHasUnresolvedConflictsKey = "NSMetadataUbiquitousItemHasUnresolvedConflictsKey"
/// The downloading status (one of the `…DownloadingStatus…` strings).
public let NSMetadataUbiquitousItemDownloadingStatusKey = "NSMetadataUbiquitousItemDownloadingStatusKey"
/// Whether a download is in progress (`NSNumber`, Boolean).
public let NSMetadataUbiquitousItemIsDownloadingKey = "NSMetadataUbiquitousItemIsDownloadingKey"
/// Whether the item is uploaded (`NSNumber`, Boolean).
public let NSMetadataUbiquitousItemIsUploadedKey = "NSMetadataUbiquitousItemIsUploadedKey"
/// Whether an upload is in progress (`NSNumber`, Boolean).
public let NSMetadataUbiquitousItemIsUploadingKey = "NSMetadataUbiquitousItemIsUploadingKey"
/// Percent downloaded, 0–100 (`NSNumber`).
public let NSMetadataUbiquitousItemPercentDownloadedKey = "NSMetadataUbiquitousItemPercentDownloadedKey"
/// Percent uploaded, 0–100 (`NSNumber`).
public let NSMetadataUbiquitousItemPercentUploadedKey = "NSMetadataUbiquitousItemPercentUploadedKey"
/// The values of `NSMetadataUbiquitousItemDownloadingStatusKey` (Apple's strings, equal to the
/// `URLUbiquitousItemDownloadingStatus` raw values).
public let NSMetadataUbiquitousItemDownloadingStatusNotDownloaded = "NSURLUbiquitousItemDownloadingStatusNotDownloaded"
/// A local copy exists; it may not be the newest.
public let NSMetadataUbiquitousItemDownloadingStatusDownloaded = "NSURLUbiquitousItemDownloadingStatusDownloaded"
/// The local copy is the newest known.
public let NSMetadataUbiquitousItemDownloadingStatusCurrent = "NSURLUbiquitousItemDownloadingStatusCurrent"

/// One result of an `NSMetadataQuery`: Apple's `NSMetadataItem`, over Ubiquity's `MetadataItem`.
///
/// A query hands out one object per result and keeps it up to date: when the result changes (or
/// is renamed), the same object answers the new values — so `index(ofResult:)` and identity
/// comparisons work as on Apple platforms. Any thread.
open class NSMetadataItem: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the only mutable state is `current`, behind its own lock (`NSLock`).
    private let lock = NSLock()
    private var current: MetadataItem

    init(_ item: MetadataItem) {
        current = item
    }

    /// An item for the file or folder at `url` (not following a final symbolic link), or nil when
    /// there is none or it cannot be examined.
    public init?(url: URL) {
        guard url.isFileURL, let item = MetadataItem.examine(url) else { return nil }
        current = item
    }

    var item: MetadataItem {
        lock.lock(); defer { lock.unlock() }
        return current
    }

    func update(_ item: MetadataItem) {
        lock.lock(); defer { lock.unlock() }
        current = item
    }

    /// The value of the attribute named `key` (one of the `NSMetadataItem…Key` constants), or nil.
    open func value(forAttribute key: String) -> Any? {
        guard let attribute = MetadataItemAttribute(rawValue: key) else { return nil }
        return item.value(of: attribute)
    }

    /// The values of `keys` that the item has (keys without a value are left out).
    open func values(forAttributes keys: [String]) -> [String: Any]? {
        var values: [String: Any] = [:]
        for key in keys { if let value = value(forAttribute: key) { values[key] = value } }
        return values
    }

    /// The keys this item has values for.
    open var attributes: [String] {
        let item = self.item
        return MetadataItemAttribute.allCases.filter { item.value(of: $0) != nil }.map(\.rawValue)
    }

    open override var description: String {
        "<NSMetadataItem \(item.path)>"
    }
}
