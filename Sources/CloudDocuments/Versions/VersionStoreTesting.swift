import Foundation

/// Test hooks of the version store, for the crash tests' worker process:
/// `@_spi(VersionStoreTesting) import CloudDocuments`. Not part of the API.
@_spi(VersionStoreTesting)
public enum VersionStoreTesting {
    /// The points of adding or removing a version where ``setPauseHook(_:)``'s hook is called.
    public enum Step: String, Sendable, CaseIterable {
        /// The contents are in the temporary version folder; no metadata yet.
        case contentsWritten = "contents-written"
        /// Contents and metadata are written and flushed; the rename into place comes next.
        case beforeRename = "before-rename"
        /// The version is in place; the item folder is not flushed yet.
        case afterRename = "after-rename"
        /// Removing: the version was renamed to its trash name; the trash is not deleted yet.
        case movedToTrash = "moved-to-trash"
    }

    /// Sets (or clears, with `nil`) a function called on the adding thread at each ``Step``.
    public static func setPauseHook(_ hook: (@Sendable (Step) -> Void)?) {
        pauseHook.withLock { $0 = hook }
    }

    static let pauseHook = Locked<(@Sendable (Step) -> Void)?>(nil)

    static func pause(_ step: Step) {
        if let hook = pauseHook.withLock({ $0 }) { hook(step) }
    }
}
