import Foundation

/// One item and how it will be accessed, for ``Coordinator/coordinate(with:queue:byAccessor:)``
/// (Apple's `NSFileAccessIntent`).
///
/// Like Apple's, an intent is an object whose ``url`` the coordination updates: inside the
/// accessor, use ``url`` rather than the URL you started with. If the item was moved by a
/// coordinated move while the coordinator waited, ``url`` is the new location; for a
/// `.resolvesSymbolicLink` read it is the link's target, and for a `.forUploading` read it is the
/// temporary snapshot.
///
/// ## When `url` changes
/// Only the coordination the intent was passed to changes ``url``, and only *before* its accessor
/// runs (while it waits for locks, then once more just before running the accessor). From the
/// moment the accessor starts, ``url`` no longer changes. Reading it from any thread at any time is
/// safe (a read during the wait sees the old or the new URL). Pass an intent to one coordination
/// at a time: two coordinations running with the same intent object would both update it.
public final class FileAccessIntent: Sendable {
    enum Kind: Sendable, Equatable {
        case reading(Coordinator.ReadingOptions)
        case writing(Coordinator.WritingOptions)
    }

    /// The URL behind a lock: the waiting thread writes it while the caller may read it.
    private let currentURL: Locked<URL>
    let kind: Kind

    init(url: URL, kind: Kind) {
        currentURL = Locked(url)
        self.kind = kind
    }

    /// The item's URL: where it is now if a coordinated move moved it while the coordination
    /// waited, and otherwise the URL the accessor must use (see "When `url` changes").
    public internal(set) var url: URL {
        get { currentURL.withLock { $0 } }
        set { currentURL.withLock { $0 = newValue } }
    }

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
