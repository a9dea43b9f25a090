import Foundation

extension URL {
    /// The ubiquitous-item resource values of this file URL, keyed by Apple's `URLResourceKey`s —
    /// the values swift-corelibs-foundation declares keys for but never fills (its
    /// `resourceValues(forKeys:)` leaves them out, and its `URLResourceValues` has no property for
    /// them and no public way to be given them, so they come back as a dictionary, like
    /// `NSURL.resourceValues(forKeys:)` returns on Apple platforms).
    ///
    /// | key | value |
    /// |---|---|
    /// | `.isUbiquitousItemKey` | `Bool` |
    /// | `.ubiquitousItemDownloadingStatusKey` | `String`: Apple's raw value (`"NSURLUbiquitousItemDownloadingStatusCurrent"`, …; ``UbiquitousItemStatus/DownloadingStatus`` has them) |
    /// | `.ubiquitousItemIsDownloadingKey`, `.ubiquitousItemIsUploadedKey`, `.ubiquitousItemIsUploadingKey`, `.ubiquitousItemHasUnresolvedConflictsKey`, `.ubiquitousItemDownloadRequestedKey` | `Bool` |
    /// | `.ubiquitousItemContainerDisplayNameKey` | `String`: the container identifier |
    /// | `NSMetadataUbiquitousItemPercentDownloadedKey` / `…PercentUploadedKey` raw values (`URLResourceKey(rawValue:)`) | `Double`, when the provider knows |
    ///
    /// For an item outside every container only `.isUbiquitousItemKey` (`false`) is returned; the
    /// ubiquitous keys are left out, as on Apple platforms. Keys that are not ubiquitous-item keys
    /// are ignored (ask `resourceValues(forKeys:)` for those). The typed answer is
    /// ``UbiquityAccount/status(ofItemAt:)``.
    ///
    /// - Throws: `UbiquityError.itemNotFound` when nothing is at the URL (Apple's call fails too).
    public func ubiquitousResourceValues(forKeys keys: Set<URLResourceKey>,
                                         account: UbiquityAccount = .shared) throws(UbiquityError) -> [URLResourceKey: Any] {
        guard UbiquityAccount.itemExists(standardizedFileURL) else { throw .itemNotFound(path: standardizedFileURL.path) }
        let status = account.status(ofItemAt: self)
        var values: [URLResourceKey: Any] = [:]
        if keys.contains(.isUbiquitousItemKey) { values[.isUbiquitousItemKey] = status.isUbiquitous }
        guard status.isUbiquitous else { return values }
        for key in keys {
            switch key {
            case .ubiquitousItemDownloadingStatusKey: values[key] = status.downloadingStatus.rawValue
            case .ubiquitousItemIsDownloadingKey: values[key] = status.isDownloading
            case .ubiquitousItemIsUploadedKey: values[key] = status.isUploaded
            case .ubiquitousItemIsUploadingKey: values[key] = status.isUploading
            case .ubiquitousItemHasUnresolvedConflictsKey: values[key] = status.hasUnresolvedConflicts
            case .ubiquitousItemDownloadRequestedKey: values[key] = status.isDownloading
            case .ubiquitousItemContainerDisplayNameKey: values[key] = account.containerOfItem(at: self)?.identifier
            case .ubiquitousItemPercentDownloadedKey: values[key] = status.percentDownloaded
            case .ubiquitousItemPercentUploadedKey: values[key] = status.percentUploaded
            default: continue
            }
        }
        return values
    }
}

extension URLResourceKey {
    /// The percent downloaded (0–100), when the provider knows: Apple's
    /// `NSMetadataUbiquitousItemPercentDownloadedKey` (a metadata attribute on Apple platforms).
    public static let ubiquitousItemPercentDownloadedKey = URLResourceKey(rawValue: "NSMetadataUbiquitousItemPercentDownloadedKey")
    /// The percent uploaded (0–100), when the provider knows: Apple's
    /// `NSMetadataUbiquitousItemPercentUploadedKey`.
    public static let ubiquitousItemPercentUploadedKey = URLResourceKey(rawValue: "NSMetadataUbiquitousItemPercentUploadedKey")
}
