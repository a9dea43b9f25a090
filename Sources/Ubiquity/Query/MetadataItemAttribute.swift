import Foundation

/// An attribute of a metadata query result, named with the string of Apple's constant
/// (`NSMetadataItemFSNameKey` is `"kMDItemFSName"`, …), so that `rawValue` is what Apple code
/// passes to `value(forAttribute:)`, to `%K` in a predicate format, or as a sort key.
public enum MetadataItemAttribute: String, Sendable, Hashable, CaseIterable {
    /// The file name (`String`), Apple's `NSMetadataItemFSNameKey`.
    case fsName = "kMDItemFSName"
    /// The name shown to users (`String`): the file name without its extension, Apple's
    /// `NSMetadataItemDisplayNameKey`.
    case displayName = "kMDItemDisplayName"
    /// The absolute path (`String`), Apple's `NSMetadataItemPathKey`.
    case path = "kMDItemPath"
    /// The file URL (`URL`), Apple's `NSMetadataItemURLKey`.
    case url = "kMDItemURL"
    /// The size in bytes (`Int`; `nil` for a folder), Apple's `NSMetadataItemFSSizeKey`.
    case fsSize = "kMDItemFSSize"
    /// When the item was created (`Date`; the file system's birth time, `nil` when it keeps none),
    /// Apple's `NSMetadataItemFSCreationDateKey`.
    case fsCreationDate = "kMDItemFSCreationDate"
    /// When the contents last changed (`Date`, the modification time), Apple's
    /// `NSMetadataItemFSContentChangeDateKey`.
    case fsContentChangeDate = "kMDItemFSContentChangeDate"
    /// `"public.folder"` for a folder, `"public.data"` otherwise, Apple's `NSMetadataItemContentTypeKey`.
    case contentType = "kMDItemContentType"
    /// Whether the item is in a ubiquity container (`Bool`), Apple's `NSMetadataItemIsUbiquitousKey`.
    case isUbiquitous = "NSMetadataItemIsUbiquitousKey"
    /// Whether sync-tool conflict copies of the item exist (`Bool`), Apple's
    /// `NSMetadataUbiquitousItemHasUnresolvedConflictsKey`.
    case hasUnresolvedConflicts = "NSMetadataUbiquitousItemHasUnresolvedConflictsKey"
    /// Apple's `NSMetadataUbiquitousItemDownloadingStatusKey` (`String`, one of the
    /// `UbiquitousItemStatus.DownloadingStatus` raw values).
    case downloadingStatus = "NSMetadataUbiquitousItemDownloadingStatusKey"
    /// `Bool`, Apple's `NSMetadataUbiquitousItemIsDownloadingKey`.
    case isDownloading = "NSMetadataUbiquitousItemIsDownloadingKey"
    /// `Bool`, Apple's `NSMetadataUbiquitousItemIsUploadedKey`.
    case isUploaded = "NSMetadataUbiquitousItemIsUploadedKey"
    /// `Bool`, Apple's `NSMetadataUbiquitousItemIsUploadingKey`.
    case isUploading = "NSMetadataUbiquitousItemIsUploadingKey"
    /// `Double` 0–100 (`nil` when not reported), Apple's `NSMetadataUbiquitousItemPercentDownloadedKey`.
    case percentDownloaded = "NSMetadataUbiquitousItemPercentDownloadedKey"
    /// `Double` 0–100 (`nil` when not reported), Apple's `NSMetadataUbiquitousItemPercentUploadedKey`.
    case percentUploaded = "NSMetadataUbiquitousItemPercentUploadedKey"
}
