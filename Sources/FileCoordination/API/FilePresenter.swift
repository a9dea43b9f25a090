import Foundation

/// An object that presents a file or directory to the user and wants to hear when other code
/// reads, writes, moves or deletes it: Apple's `NSFilePresenter`, for Linux.
///
/// Register a presenter with ``Coordinator/addFilePresenter(_:)`` (ideally from inside a
/// coordinated read, so no change slips by between reading and registering) and remove it with
/// ``Coordinator/removeFilePresenter(_:)`` before it goes away. The registry holds presenters
/// weakly: a presenter that is deallocated simply stops receiving messages.
///
/// ## Threading
/// Every message below is delivered on ``presentedItemOperationQueue``, never on the thread of the
/// coordinator that caused it. ``presentedItemURL`` may be read on any thread at any time,
/// including from inside coordinator calls, so it must be safe to read concurrently.
///
/// ## Answering
/// The methods that take a completion handler or a block **must** call it exactly once. A
/// coordinator that messaged the presenter waits for the answer (bounded by its
/// ``Coordinator/timeout``); an error passed to a completion handler vetoes the access: the
/// accessor does not run and the coordinator throws ``CoordinationError/presenterFailed(_:)``.
///
/// Every method except the two required properties has a default implementation that answers at
/// once with success (or does nothing), as Apple's optional methods behave when not implemented.
public protocol FilePresenter: AnyObject, Sendable {
    /// The item this presenter presents; `nil` when it does not exist yet.
    /// Read on any thread, at any time.
    var presentedItemURL: URL? { get }

    /// The queue on which every message to this presenter is delivered.
    /// Use a serial queue (`maxConcurrentOperationCount = 1`) unless the presenter is thread-safe.
    var presentedItemOperationQueue: OperationQueue { get }

    /// Another coordinator wants to read the item. Stop what would disturb a reader, then call
    /// `reader`, optionally passing a *reacquirer* that is run on this presenter's queue when the
    /// reader is done.
    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)

    /// Another coordinator wants to write the item. Stop editing, then call `writer`, optionally
    /// passing a *reacquirer* that is run on this presenter's queue when the writer is done.
    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void)

    /// Save unsaved changes now, because someone is about to read (or merge) the item. Call the
    /// handler with `nil` when saved, or with an error to refuse (the other party then fails with
    /// ``CoordinationError/presenterFailed(_:)``).
    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item is about to be deleted. Close it, then call the handler (`nil`, or an error to veto).
    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item's local copy is about to be evicted (files on demand: only the server will keep
    /// its bytes; a coordinated write with ``Coordinator/WritingOptions/forEvicting``). Do
    /// whatever makes the eviction safe — close the item, stop presenting it — and call
    /// `completionHandler(nil)`; pass an error to prevent the eviction. The default refuses, as
    /// Apple's does for a presenter that does not implement it (``EvictionNotAccommodated``);
    /// `CloudDocument` implements it (closes when it has no unsaved changes).
    func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// The item was moved or renamed to `newURL` by a coordinated move.
    func presentedItemDidMove(to newURL: URL)

    /// The item's contents or attributes were changed by a coordinated write.
    func presentedItemDidChange()

    /// (Directories) A new item appeared inside the presented directory, at `url` (at any depth):
    /// a coordinated write made it, or a program that does not coordinate (a sync tool, in any
    /// process), which the change monitor noticed. A file made without coordination is announced
    /// once its maker closed it. Called on ``presentedItemOperationQueue``.
    func presentedSubitemDidAppear(at url: URL)

    /// (Directories) An item inside the presented directory changed, at `url` (at any depth). For
    /// a change made without coordination this also means *replaced* (deleted, then a temporary
    /// renamed to its name: one message) or *deleted* — as Apple's system reports a deletion it
    /// notices afterwards; check whether the item is still there. Called on
    /// ``presentedItemOperationQueue``. See Docs/Coordination.md, "Changes made elsewhere".
    func presentedSubitemDidChange(at url: URL)

    /// (Directories) An item inside the presented directory moved from `oldURL` to `newURL`.
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL)

    /// (Directories) An item inside the presented directory, at `url`, is about to be deleted by
    /// a coordinated delete. Call the handler with `nil`, or with an error to veto. (A deletion
    /// made without coordination cannot be asked about: it is reported afterwards with
    /// ``presentedSubitemDidChange(at:)``.)
    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void)

    /// A version of the item was added (for instance a conflict version kept by a document's save,
    /// or a version added with `FileVersion.addOfItem`). Sent to every presenter of the item in
    /// this process, the one whose coordinator made the change included.
    func presentedItemDidGain(_ version: FileVersionReference)

    /// A version of the item was removed. Sent like ``presentedItemDidGain(_:)``.
    func presentedItemDidLose(_ version: FileVersionReference)

    /// A conflict version of the item was resolved (`FileVersion.isResolved` became `true`). Sent
    /// like ``presentedItemDidGain(_:)``.
    func presentedItemDidResolveConflict(_ version: FileVersionReference)
}

extension FilePresenter {
    /// Default: gives the item up at once, with no reacquirer. Runs on the presenter's queue.
    public func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        reader(nil)
    }
    /// Default: gives the item up at once, with no reacquirer. Runs on the presenter's queue.
    public func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        writer(nil)
    }
    /// Default: nothing to save; answers success at once. Runs on the presenter's queue.
    public func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Default: accepts the deletion at once. Runs on the presenter's queue.
    public func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Default: refuses (``EvictionNotAccommodated``): a presenter that does not say it can do
    /// without the local copy keeps it, as on Apple platforms. Runs on the presenter's queue.
    public func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(EvictionNotAccommodated(url: presentedItemURL))
    }
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedItemDidMove(to newURL: URL) {}
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedItemDidChange() {}
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedSubitemDidAppear(at url: URL) {}
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedSubitemDidChange(at url: URL) {}
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {}
    /// Default: accepts the deletion at once. Runs on the presenter's queue.
    public func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedItemDidGain(_ version: FileVersionReference) {}
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedItemDidLose(_ version: FileVersionReference) {}
    /// Default: does nothing. Runs on the presenter's queue.
    public func presentedItemDidResolveConflict(_ version: FileVersionReference) {}
}

/// The default answer of ``FilePresenter/accommodatePresentedItemEviction(completionHandler:)``:
/// this presenter does not accommodate eviction, so the item stays.
public struct EvictionNotAccommodated: Error, LocalizedError, Sendable, Equatable {
    /// The presented item.
    public let url: URL?

    public init(url: URL?) { self.url = url }

    public var errorDescription: String? {
        "\(url?.path ?? "the item") is presented by a program that does not let it be evicted (its presenter does not implement accommodatePresentedItemEviction); close it there first"
    }
}
