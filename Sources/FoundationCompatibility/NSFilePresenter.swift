import Foundation
internal import FileCoordination

/// An object that presents a file or directory and wants to hear when other code reads, writes,
/// moves or deletes it — Apple's `NSFilePresenter`, with Apple's requirement names, for Linux.
///
/// Adopt it exactly as on Apple platforms, typically from an `NSObject` subclass:
///
/// ```swift
/// final class Logger: NSObject, NSFilePresenter {
///     let presentedItemURL: URL?
///     let presentedItemOperationQueue = OperationQueue()
///     init(url: URL) { presentedItemURL = url }
///     func presentedItemDidChange() { /* reload */ }
/// }
/// ```
///
/// and register it with ``NSFileCoordinator/addFilePresenter(_:)``.
///
/// ## Optional methods
/// Only ``presentedItemURL`` and ``presentedItemOperationQueue`` are required. Every other method
/// has a default implementation that behaves as Apple's coordinator does when an optional method
/// is not implemented: relinquishing answers at once with no reacquirer, saving and deletion
/// requests are accepted at once, notifications are ignored. Because the defaults live in a
/// protocol extension, a subclass can `override` one of these methods only if its superclass
/// implements it (as on Apple platforms, where `override` needs a superclass implementation too).
///
/// ## Threading and `Sendable`
/// Like Apple's, the protocol is not `Sendable`: a presenter class needs no locks, no
/// `@unchecked Sendable` and no annotations to adopt it in Swift 6 mode. The contract is Apple's:
/// - every message is delivered on ``presentedItemOperationQueue``, and reacquirers run on it too.
///   A new `OperationQueue` is concurrent: set its `maxConcurrentOperationCount` to 1 if your
///   methods share state without locks;
/// - ``presentedItemURL`` and ``presentedItemOperationQueue`` are read by coordinators on any
///   thread, so keep them constant or protect them.
///
/// The completion handlers and reacquirers are `@Sendable`, as in Apple's current SDK. The protocol
/// is `@preconcurrency`, so older code that declares them without `@Sendable` still compiles (with a
/// warning in Swift 6 mode) and its methods are still called.
///
/// ## Version messages
/// ``presentedItemDidGain(_:)``, ``presentedItemDidLose(_:)`` and
/// ``presentedItemDidResolveConflict(_:)`` arrive, as on Apple platforms, for every change of the
/// item's versions made in this process (by ``NSFileVersion``, CloudDocuments' `FileVersion` or a
/// document's save), on ``presentedItemOperationQueue`` — also at the presenter whose own
/// coordinator made the change. The `NSFileVersion` is looked up when the message is delivered; a
/// version already gone from the store (always, for a loss) still has its `url`,
/// `persistentIdentifier` and `isConflict` (see ``NSFileVersion``, "In version messages").
/// Changes made by other processes are not messaged.
///
/// ## Not (yet) provided
/// The subitem forms of the version messages (`presentedSubitem(at:didGain:)`,
/// `presentedSubitem(at:didLose:)`, `presentedSubitem(at:didResolve:)`): version messages go to the
/// item's own presenters only. The ubiquity and eviction messages need iCloud.
/// `primaryPresentedItemURL` is accepted but not used: related items ("sidecar" files) are not
/// coordinated as one.
@preconcurrency
public protocol NSFilePresenter: NSObjectProtocol {
    /// The item this presenter presents; `nil` while it does not exist. Read on any thread.
    var presentedItemURL: URL? { get }

    /// The queue every message to this presenter is delivered on. Read on any thread.
    var presentedItemOperationQueue: OperationQueue { get }

    /// For a presenter of a related item (a sidecar file), the main item. Default `nil`.
    /// Accepted for source compatibility; the coordination does not use it.
    var primaryPresentedItemURL: URL? { get }

    /// Another coordinator wants to read the item. Stop what would disturb a reader, then call
    /// `reader`, optionally with a *reacquirer*, which is run on ``presentedItemOperationQueue``
    /// once the reader is done. Default: calls `reader(nil)` at once.
    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)

    /// Another coordinator wants to write the item. Stop editing, then call `writer`, optionally
    /// with a reacquirer, run on ``presentedItemOperationQueue`` once the writer is done.
    /// Default: calls `writer(nil)` at once.
    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)

    /// Someone is about to read (or merge) the item: save unsaved changes, then call the handler
    /// with `nil`, or with an error to refuse — the other party's coordination then fails with an
    /// `NSError` in `NSCocoaErrorDomain` (see ``NSFileCoordinator``). To write the item from here,
    /// coordinate with `NSFileCoordinator(filePresenter: self)`: it joins the waiting party's locks
    /// instead of waiting for them. Default: answers `nil` at once.
    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item is about to be deleted: close it, then call the handler with `nil` (or an error to
    /// veto). Default: answers `nil` at once.
    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item's local copy is about to be evicted (files on demand): make the eviction safe
    /// (close the item, stop presenting it), then call the handler with `nil`, or an error to
    /// prevent it. Default: refuses, as Apple's eviction fails when a presenter does not implement it.
    func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// A coordinated move moved or renamed the item to `newURL`; update ``presentedItemURL``.
    func presentedItemDidMove(to newURL: URL)

    /// The item's contents or attributes changed (a coordinated write, or a change another process
    /// made).
    func presentedItemDidChange()

    /// (Directories) A new item appeared inside the presented directory, at `url` (at any depth):
    /// made by a coordinated write, or by a program that does not coordinate (a sync tool) in any
    /// process. Called on ``presentedItemOperationQueue``.
    func presentedSubitemDidAppear(at url: URL)

    /// (Directories) The item inside the presented directory at `url` (at any depth) changed — or,
    /// for a change made without coordination, was replaced or deleted (as Apple's system reports
    /// deletions it notices afterwards: check whether it is still there). Called on
    /// ``presentedItemOperationQueue``.
    func presentedSubitemDidChange(at url: URL)

    /// (Directories) The item inside the presented directory moved from `oldURL` to `newURL`.
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL)

    /// (Directories) The item inside the presented directory at `url` is about to be deleted.
    /// Call the handler with `nil`, or with an error to veto. Default: answers `nil` at once.
    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// A version of the item was added: a conflict version a save kept, a sync tool's conflict
    /// copy that appeared beside the item, or a version added with
    /// ``NSFileVersion/addOfItem(at:withContentsOf:options:)``. Sent to every presenter of the
    /// item (in this process and, by default, in other processes of the user), the one whose
    /// coordinator made the change included; called on ``presentedItemOperationQueue``. If the
    /// version is gone by then, the object describes it from the message (its `url`,
    /// `persistentIdentifier` and `isConflict`).
    func presentedItemDidGain(_ version: NSFileVersion)

    /// A version of the item was removed (``NSFileVersion/remove()``,
    /// ``NSFileVersion/removeOtherVersionsOfItem(at:)``, a replacement `.byMoving`). The version is
    /// gone from the store: its `url`, `persistentIdentifier` and `isConflict` tell which it was.
    /// Called on ``presentedItemOperationQueue``.
    func presentedItemDidLose(_ version: NSFileVersion)

    /// A conflict version of the item was resolved (``NSFileVersion/isResolved`` became `true`).
    /// Called on ``presentedItemOperationQueue``.
    func presentedItemDidResolveConflict(_ version: NSFileVersion)
}

extension NSFilePresenter {
    /// Default: `nil` (the item is not a related item of another).
    public var primaryPresentedItemURL: URL? { nil }
    /// Default: relinquishes at once with no reacquirer.
    public func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        reader(nil)
    }
    /// Default: relinquishes at once with no reacquirer.
    public func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        writer(nil)
    }
    /// Default: nothing to save; answers `nil` at once.
    public func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Default: accepts the deletion at once.
    public func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Default: refuses the eviction (`EvictionNotAccommodated`), as Apple's does.
    public func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(EvictionNotAccommodated(url: presentedItemURL))
    }
    /// Default: does nothing.
    public func presentedItemDidMove(to newURL: URL) {}
    /// Default: does nothing.
    public func presentedItemDidChange() {}
    /// Default: does nothing.
    public func presentedSubitemDidAppear(at url: URL) {}
    /// Default: does nothing.
    public func presentedSubitemDidChange(at url: URL) {}
    /// Default: does nothing.
    public func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {}
    /// Default: accepts the deletion at once.
    public func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Default: does nothing.
    public func presentedItemDidGain(_ version: NSFileVersion) {}
    /// Default: does nothing.
    public func presentedItemDidLose(_ version: NSFileVersion) {}
    /// Default: does nothing.
    public func presentedItemDidResolveConflict(_ version: NSFileVersion) {}
}
