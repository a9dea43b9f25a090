import Foundation

/// One item and how it will be accessed, for ``Coordinator/coordinate(with:queue:byAccessor:)``
/// (Apple's `NSFileAccessIntent`).
///
/// Inside the accessor, use ``url`` rather than the URL you started with: if the item was moved
/// by a coordinated move while the coordinator waited, ``url`` is the new location.
public struct FileAccessIntent: Sendable {
    enum Kind: Sendable, Equatable {
        case reading(Coordinator.ReadingOptions)
        case writing(Coordinator.WritingOptions)
    }

    /// The item's URL (updated if the item moved while waiting).
    public internal(set) var url: URL
    let kind: Kind

    /// An intent to read the item at `url`.
    public static func readingIntent(with url: URL, options: Coordinator.ReadingOptions = []) -> FileAccessIntent {
        FileAccessIntent(url: url, kind: .reading(options))
    }

    /// An intent to write the item at `url`.
    public static func writingIntent(with url: URL, options: Coordinator.WritingOptions = []) -> FileAccessIntent {
        FileAccessIntent(url: url, kind: .writing(options))
    }

    /// True for a writing intent.
    public var isWriting: Bool {
        if case .writing = kind { return true }
        return false
    }
}
