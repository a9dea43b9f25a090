import Foundation

/// Apple's `URLUbiquitousItemDownloadingStatus`, which swift-corelibs-foundation lacks: the
/// values of `URLResourceKey.ubiquitousItemDownloadingStatusKey`, with Apple's raw strings.
///
/// corelibs' `URLResourceValues` cannot carry ubiquitous values, so read them with the Ubiquity
/// module's `url.ubiquitousResourceValues(forKeys:)` (a dictionary whose downloading status is this
/// type's raw string) and wrap it: `URLUbiquitousItemDownloadingStatus(rawValue: value)`.
public struct URLUbiquitousItemDownloadingStatus: RawRepresentable, Hashable, Sendable {
    /// Apple's string for the status.
    public let rawValue: String

    /// The status named by Apple's string.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Only a placeholder is local.
    public static let notDownloaded = URLUbiquitousItemDownloadingStatus(rawValue: "NSURLUbiquitousItemDownloadingStatusNotDownloaded")
    /// A local copy exists, but a newer one is known to be in the cloud.
    public static let downloaded = URLUbiquitousItemDownloadingStatus(rawValue: "NSURLUbiquitousItemDownloadingStatusDownloaded")
    /// The local copy is the newest known.
    public static let current = URLUbiquitousItemDownloadingStatus(rawValue: "NSURLUbiquitousItemDownloadingStatusCurrent")
}
