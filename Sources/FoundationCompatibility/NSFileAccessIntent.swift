import Foundation
internal import FileCoordination

/// One item and how it will be accessed, for ``NSFileCoordinator/coordinate(with:queue:byAccessor:)``:
/// Apple's `NSFileAccessIntent`.
///
/// Inside the accessor, use ``url`` rather than the URL you started with: before the accessor runs
/// the coordination sets it to the URL to use — the item's new place if a coordinated move moved it
/// while the coordinator waited, a link's target for `.resolvesSymbolicLink`, the snapshot for
/// `.forUploading`. It no longer changes once the accessor has started, and may be read on any
/// thread. Pass an intent to one coordination at a time.
public final class NSFileAccessIntent: NSObject, Sendable {
    /// The FileCoordination intent doing the work; its `url` is the one updated.
    let intent: FileAccessIntent
    /// True for a reading intent with `.forUploading` (used to choose the error code).
    let isUploadingRead: Bool

    private init(_ intent: FileAccessIntent, isUploadingRead: Bool) {
        self.intent = intent
        self.isUploadingRead = isUploadingRead
    }

    /// An intent to read the item at `url` with `options`.
    public class func readingIntent(with url: URL, options: NSFileCoordinator.ReadingOptions = []) -> NSFileAccessIntent {
        NSFileAccessIntent(.readingIntent(with: url, options: options.native),
                           isUploadingRead: options.contains(.forUploading))
    }

    /// An intent to write the item at `url` with `options`.
    public class func writingIntent(with url: URL, options: NSFileCoordinator.WritingOptions = []) -> NSFileAccessIntent {
        NSFileAccessIntent(.writingIntent(with: url, options: options.native), isUploadingRead: false)
    }

    /// The URL of the item: the one to use inside the accessor (see above).
    public var url: URL { intent.url }
}
