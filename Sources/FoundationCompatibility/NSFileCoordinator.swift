import Foundation
internal import CloudDocuments
internal import FileCoordination
internal import Ubiquity

/// Coordinates reading and writing of files and directories with other coordinators — in this
/// process and in every other process of the same user — and with file presenters: Apple's
/// `NSFileCoordinator`, with Apple's names and shapes, for Linux. It is a thin layer over
/// FileCoordination's `Coordinator`; every coordination rule of Docs/Coordination.md applies.
///
/// ```swift
/// var error: NSError?
/// NSFileCoordinator(filePresenter: nil).coordinate(writingItemAt: url, options: .forReplacing, error: &error) { url in
///     try? data.write(to: url)
/// }
/// if let error { … }
/// ```
///
/// ## Errors
/// The `error:` forms run the accessor only if the coordination succeeds; otherwise they set the
/// error to an `NSError` in `NSCocoaErrorDomain` and return without running it. Codes: cancelled
/// → `NSUserCancelledError`; a presenter refused → the presenter's code if it is a Cocoa error,
/// else `NSFileReadUnknownError`/`NSFileWriteUnknownError`; the item could not be locked (time-out,
/// deadlock, unusable lock directory, item kept moving) → `NSFileLockingError`; the full table is in
/// Docs/FoundationCompatibility.md. The FileCoordination error is under `NSUnderlyingErrorKey`.
/// Pass `nil` for `error:` to ignore it. Like Apple's, the accessors cannot throw: record your own
/// I/O errors in a variable captured by the accessor.
///
/// ## Threading
/// The `error:` forms block the calling thread while they wait and run the accessor on it. The
/// queue form runs its accessor on the queue given. Presenter messages are delivered on each
/// presenter's `presentedItemOperationQueue`. A coordinator may be used from any thread, and
/// ``cancel()`` called from any thread.
open class NSFileCoordinator: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the only stored state is immutable and Sendable (`coordinator`, a
    // Sendable class, and `presenterBridge`, see PresenterBridge); the user's presenter object is
    // reached only through the bridge. Subclasses that add state must protect it.
    let coordinator: Coordinator
    /// Keeps the bridge (and so the presenter's identity) alive as long as this coordinator.
    private let presenterBridge: PresenterBridge?

    /// Creates a coordinator, optionally acting for `filePresenterOrNil`: that presenter is then
    /// not messaged about this coordinator's own accesses, and while it answers a save or deletion
    /// request, coordinating through this coordinator joins the requester's locks instead of
    /// waiting for them. The presenter is not retained beyond the bridge that stands for it.
    public init(filePresenter filePresenterOrNil: (any NSFilePresenter)?) {
        SyncToolRules.registerWithCoordination()  // before the first coordination (see its doc)
        FilesOnDemand.enableForSharedAccount()  // evicted items download when accessed
        let bridge = filePresenterOrNil.map(PresenterBridge.bridge(for:))
        presenterBridge = bridge
        coordinator = Coordinator(filePresenter: bridge)
        super.init()
    }

    /// A coordinator acting for no presenter: the same as `NSFileCoordinator(filePresenter: nil)`.
    public convenience override init() {
        self.init(filePresenter: nil)
    }

    /// Coordinators with the same purpose identifier never block each other, in this process or in
    /// others. Defaults to a string unique to this coordinator. Set it before coordinating.
    open var purposeIdentifier: String {
        get { coordinator.purposeIdentifier }
        set { coordinator.purposeIdentifier = newValue }
    }

    /// Cancels this coordinator: a wait in progress ends at once with `NSUserCancelledError`, and
    /// later calls fail with it without waiting. Messages already sent to presenters are not
    /// recalled. Safe to call from any thread, any number of times.
    open func cancel() {
        coordinator.cancel()
    }

    // MARK: Presenters

    /// Registers `filePresenter` process-wide so it receives messages on its
    /// `presentedItemOperationQueue`. Register from inside a coordinated read so no change slips by.
    ///
    /// Unlike Apple's, which retains presenters until they are removed, the registration holds
    /// the presenter weakly: a presenter that is deallocated simply stops receiving messages.
    /// Remove it when done, as on Apple platforms.
    open class func addFilePresenter(_ filePresenter: any NSFilePresenter) {
        SyncToolRules.registerWithCoordination()  // before the monitor watches (see its doc)
        Coordinator.addFilePresenter(PresenterBridge.bridge(for: filePresenter))
    }

    /// Unregisters `filePresenter`. Removing one that is not registered does nothing. Messages
    /// already queued on its `presentedItemOperationQueue` may still arrive.
    open class func removeFilePresenter(_ filePresenter: any NSFilePresenter) {
        guard let bridge = PresenterBridge.existingBridge(for: filePresenter) else { return }
        Coordinator.removeFilePresenter(bridge)
    }

    /// Every `NSFilePresenter` registered with ``addFilePresenter(_:)`` and still alive. (Presenters
    /// registered through FileCoordination or CloudDocuments directly are not listed.)
    open class var filePresenters: [any NSFilePresenter] {
        Coordinator.filePresenters.compactMap { ($0 as? PresenterBridge)?.presenter }
    }

    // MARK: Moves

    /// Announces that the item at `oldURL` was moved to `newURL`. Call it inside the write
    /// accessor of the move (the source coordinated `.forMoving`). Presenters of the item and of
    /// everything inside it get `presentedItemDidMove(to:)`, presenters of the directories
    /// involved get `presentedSubitem(at:didMoveTo:)`, asynchronously on their queues; this
    /// coordinator's own presenter is not messaged.
    open func item(at oldURL: URL, didMoveTo newURL: URL) {
        coordinator.item(at: oldURL, didMoveTo: newURL)
    }

    /// Announces that the item at `oldURL` is about to be moved to `newURL`. Does nothing here:
    /// on Apple platforms it prepares iCloud for the move, which has no equivalent on Linux; the
    /// move itself is coordinated by the `.forMoving` write and announced by
    /// ``item(at:didMoveTo:)``. Kept so that code calling it compiles.
    open func item(at oldURL: URL, willMoveTo newURL: URL) {}
}
