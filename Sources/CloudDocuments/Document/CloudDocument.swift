import FileCoordination
import Foundation
import Synchronization

/// A document backed by a file or a file package: Apple's `UIDocument`, for Linux.
///
/// Subclass it and implement two hooks — ``contents(forType:)`` (return a snapshot of your model
/// as bytes or a ``FilePackage``) and ``load(fromContents:ofType:)`` (rebuild your model from
/// one) — and the document does the rest: coordinated, crash-safe opening and saving, change
/// tracking with undo, autosave, state notifications, and the right reaction when another
/// coordinator (or, later, another process) reads, writes, moves or deletes the file.
///
/// ```swift
/// import Synchronization
///
/// final class NoteDocument: CloudDocument, @unchecked Sendable {
///     // @unchecked: the only added state, `body`, is behind a Mutex.
///     private let body = Mutex("")
///     override func contents(forType typeName: String) throws -> DocumentContents {
///         .data(Data(body.withLock { $0 }.utf8))
///     }
///     override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
///         guard let data = contents.data, let text = String(data: data, encoding: .utf8) else {
///             throw DocumentError.contentsInvalid("not UTF-8 text")
///         }
///         body.withLock { $0 = text }
///     }
/// }
/// ```
///
/// ## Life cycle
/// A new document is ``DocumentState/closed``. ``open()`` reads the file (coordinated) and makes it
/// ``DocumentState/normal``; ``save(to:for:)`` writes it with ``SafeSave`` (coordinated);
/// ``close()`` saves unsaved changes and makes it closed again. Saving a *closed* document (a new
/// one, typically with ``SaveOperation/forCreating``) writes it and leaves it open. While open, the
/// document is the registered ``FilePresenter`` of its file.
///
/// ## Threading
/// - **Lifecycle operations** (open, save, close, revert, autosave — async or completion-handler
///   forms) are serialized: each waits for the previous one to finish, in the order they were
///   called, on a private serial queue, and do their blocking file work on background threads
///   (never on Swift's cooperative thread pool). Saves asked for by other coordinators
///   (`savePresentedItemChanges`) run at once instead — waiting behind an operation that waits
///   for that very coordinator would deadlock — but never write at the same time as another save
///   of this document.
/// - **The document queue** (``presentedItemOperationQueue``, a serial `OperationQueue`) runs,
///   one at a time: the hooks ``contents(forType:)`` and ``load(fromContents:ofType:)``,
///   ``handleError(_:userInteractionPermitted:)``, ``finishedHandlingError(_:recovered:)``,
///   ``disableEditing()``, ``enableEditing()``, every ``FilePresenter`` message, the posting of
///   ``stateChangedNotification`` and the yielding to ``stateChanges``. A subclass therefore never
///   sees two hook calls at once. Do not block this queue for long and do not make synchronous
///   coordinated accesses of the document's file on it (the coordinator would wait for the
///   document, which waits for the queue).
/// - **Completion handlers** run on the `queue` you pass, or by default on a private serial
///   queue of the document (never the main queue: Linux programs often have no main run loop).
/// - **Everything else** (``fileURL``, ``documentState``, ``hasUnsavedChanges``,
///   ``updateChangeCount(_:)``, ``undoManager``, …) may be used from any thread. Editing the model
///   (and the undo manager, like Apple's) should happen on one thread or queue at a time; the
///   model itself must be safe to snapshot from the document queue while you edit it elsewhere
///   (e.g. keep it behind a lock, as `TextDocument` does).
///
/// ## Sendable
/// `@unchecked Sendable`: every mutable property of this class lives in one lock-protected
/// `storage` value (an `NSLock`, which ThreadSanitizer understands, rather than
/// `Synchronization.Mutex`, which it does not on Linux), whose critical sections never call out (no hook, observer, coordinator or
/// registry call runs with it held). The remaining stored properties are immutable references to
/// thread-safe objects (queues, a lock). Subclasses must keep their own state thread-safe in the
/// same way.
open class CloudDocument: FilePresenter, @unchecked Sendable {
    // MARK: Stored properties

    /// Every mutable property. Never held while calling out.
    let storage: Locked<DocumentStorage>
    /// The queue on which presenter messages, hooks and announcements run. `cancelAllOperations()`
    /// on it cancels only the `Operation` objects you added: the document's own work there, the
    /// presenter messages coordinators deliver, and every block added with `addOperation(_:)`
    /// ignore `cancel()` (a coordinator waiting for a cancelled message would wait forever).
    public let presentedItemOperationQueue: OperationQueue
    /// The dispatch queues under the document and callback operation queues (owned here:
    /// `OperationQueue.underlyingQueue` does not keep them alive on Linux).
    let documentDispatchQueue: DispatchQueue
    private let callbackDispatchQueue: DispatchQueue
    /// Serializes the lifecycle operations (FIFO); their blocking work runs on its thread.
    let lifecycleQueue: DispatchQueue
    /// Runs the saves other coordinators ask for (`savePresentedItemChanges`), off the document
    /// queue and outside the lifecycle FIFO.
    let presenterSaveQueue: DispatchQueue
    /// Default queue for completion handlers.
    let callbackQueue: OperationQueue
    /// Held while a save snapshots and writes, so two saves of this document (a lifecycle save
    /// and one asked for by another coordinator) never write at the same time. Only taken inside
    /// a coordinated write, after the coordination locks: a save waiting for those never holds it.
    let saveLock = NSLock()

    /// The size from which loading and saving publish a `Progress` and the state
    /// ``DocumentState/progressAvailable``: 1 MiB. Each document copies it at creation; tests
    /// lower the copy (`progressThreshold`), so parallel tests do not disturb each other.
    static let defaultProgressThreshold = 1 << 20

    /// The key of ``stateChangedNotification``'s `userInfo` entry holding the announced
    /// ``DocumentState`` (the state the notification is about; ``documentState`` may already be
    /// newer when an observer runs).
    public static let stateUserInfoKey = "CloudDocumentState"

    /// Posted on the document queue after every change of ``documentState``, once per change, in
    /// order; `object` is the document, `userInfo[stateUserInfoKey]` the new state.
    public static let stateChangedNotification = Notification.Name("CloudDocumentStateChangedNotification")

    // MARK: Creating

    /// Creates a closed document for the file (or package) at `fileURL`. Nothing is read until
    /// ``open()``. Any thread.
    public init(fileURL: URL) {
        let undoManager = DocumentUndoManager()
        storage = Locked(DocumentStorage(fileURL: fileURL, undoManager: undoManager))
        let name = fileURL.lastPathComponent
        // Every queue runs on its own serial dispatch queue rather than on the global pool: the
        // document's background work blocks (waiting for coordination locks, for the disk), and
        // work queued behind blocked global threads can wait a long time for libdispatch to add a
        // thread (about a second on a 2-CPU machine). Private serial queues always get a thread.
        (presentedItemOperationQueue, documentDispatchQueue) = Self.serialQueue(named: "CloudDocument \(name)", DocumentOperationQueue())
        lifecycleQueue = DispatchQueue(label: "CloudDocument.lifecycle \(name)")
        presenterSaveQueue = DispatchQueue(label: "CloudDocument.presenterSave \(name)")
        (callbackQueue, callbackDispatchQueue) = Self.serialQueue(named: "CloudDocument callbacks \(name)", OperationQueue())
        wire(undoManager)
    }

    /// A serial `OperationQueue` on a dispatch queue of its own. Both are returned because
    /// `underlyingQueue` is unowned on Linux: the document keeps the dispatch queue alive.
    private static func serialQueue(named name: String, _ queue: OperationQueue) -> (OperationQueue, DispatchQueue) {
        let dispatchQueue = DispatchQueue(label: name)
        queue.maxConcurrentOperationCount = 1
        queue.name = name
        queue.underlyingQueue = dispatchQueue
        return (queue, dispatchQueue)
    }

    deinit {
        let (task, streams) = storage.withLock { ($0.autosaveTask, Array($0.streams.values)) }
        task?.cancel()
        for stream in streams { stream.finish() }
        Coordinator.removeFilePresenter(self)
    }

    // MARK: Identity

    /// The location of the document. Changes when a save writes to another URL, when a revert
    /// reads another URL, and when a coordinated move moves the file. Any thread.
    public var fileURL: URL { storage.withLock { $0.fileURL } }

    /// The type identifier of the file, from its extension (see ``TypeIdentifiers``).
    public var fileType: String? {
        TypeIdentifiers.typeIdentifier(for: fileURL)
    }

    /// The type saves use by default, passed to ``contents(forType:)``: ``fileType`` unless
    /// overridden.
    open var savingFileType: String? { fileType }

    /// The extension a file of type `typeName` should have (without the dot): the type's preferred
    /// extension, else the current file's. Apple's `fileNameExtension(forType:saveOperation:)`.
    open func fileNameExtension(forType typeName: String?, saveOperation: SaveOperation) -> String {
        if let typeName, let preferred = TypeIdentifiers.preferredExtension(forType: typeName) { return preferred }
        return fileURL.pathExtension
    }

    /// The file name without its extension, for display.
    public var localizedName: String {
        fileURL.deletingPathExtension().lastPathComponent
    }

    /// When the file was last modified, as of the last open, save or revert; `nil` before the
    /// first of those.
    public var fileModificationDate: Date? { storage.withLock { $0.fileModificationDate } }

    // MARK: State

    /// The current state. Changes are announced (on the document queue) through
    /// ``stateChangedNotification`` and ``stateChanges``.
    public var documentState: DocumentState { storage.withLock { $0.state } }

    /// The progress of the load or save in progress while the state contains
    /// ``DocumentState/progressAvailable`` (`nil` otherwise). Its `totalUnitCount` is the number of
    /// bytes; `completedUnitCount` advances on the document queue as they are read or written.
    public var progress: Progress? { storage.withLock { $0.progress } }

    /// The error most recently passed to ``handleError(_:userInteractionPermitted:)``, if any.
    public var lastError: (any Error)? { storage.withLock { $0.lastError } }

    /// Each change of ``documentState``, in order, exactly once per change.
    ///
    /// Every access returns a **new** stream, which receives the changes made after it was
    /// created (not the current state), unboundedly buffered, yielded on the document queue
    /// right after the corresponding notification is posted. The stream ends when the document is
    /// deallocated; stop iterating (or cancel the task) to unsubscribe earlier.
    public var stateChanges: AsyncStream<DocumentState> {
        let (stream, continuation) = AsyncStream.makeStream(of: DocumentState.self, bufferingPolicy: .unbounded)
        let id = storage.withLock { storage in
            let id = storage.nextStreamID
            storage.nextStreamID += 1
            storage.streams[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.storage.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// How long the document's coordinated accesses wait for other coordinators and presenters
    /// before failing with ``CoordinationError/timedOut``. `nil` (the default) waits forever, as
    /// Apple's documents do.
    public var coordinationTimeout: Duration? {
        get { storage.withLock { $0.coordinationTimeout } }
        set { storage.withLock { $0.coordinationTimeout = newValue } }
    }

    // MARK: Change tracking

    /// Whether there are changes not yet saved: the current version differs from the one last
    /// saved, opened or reverted to (see ``updateChangeCount(_:)``). Any thread.
    public var hasUnsavedChanges: Bool { storage.withLock { $0.changes.hasUnsavedChanges } }

    /// Records a change: `.done` and `.redone` add one, `.undone` removes one, `.cleared` marks the
    /// current contents as saved. The undo manager calls this for you. Any thread.
    ///
    /// Tracking uses change tokens: a save marks as saved the version it snapshotted, so a change
    /// made while a save is in flight keeps the document dirty, and undoing back to the saved
    /// version makes it clean.
    public func updateChangeCount(_ change: ChangeKind) {
        storage.withLock { $0.changes.record(change) }
    }

    /// The undo manager whose undo, redo and new actions drive the change count. Setting another
    /// one unhooks the old one (it stops affecting this document) and hooks the new one. Any
    /// thread; use the manager itself from one thread at a time.
    public var undoManager: DocumentUndoManager {
        get { storage.withLock { $0.undoManager } }
        set {
            let old = storage.withLock { storage in
                let old = storage.undoManager
                storage.undoManager = newValue
                return old
            }
            if old !== newValue { old.onChange = nil }
            wire(newValue)
        }
    }

    private func wire(_ manager: DocumentUndoManager) {
        manager.onChange = { [weak self] kind in
            // Forgetting the undo history (`removeAllActions()` reports `.cleared`) saves
            // nothing: the document keeps its unsaved changes, so `close()` still saves them.
            guard kind != .cleared else { return }
            self?.updateChangeCount(kind)
        }
    }

    /// How often unsaved changes are saved automatically while the document is open; `nil` (the
    /// default) for never. Each period, if there are unsaved changes, ``autosave()`` runs (as a
    /// lifecycle operation, so never at the same time as another save). Failures go to
    /// ``handleError(_:userInteractionPermitted:)`` and are retried next period.
    public var autosaveInterval: Duration? {
        get { storage.withLock { $0.autosaveInterval } }
        set {
            storage.withLock { $0.autosaveInterval = newValue }
            restartAutosaveTimer()
        }
    }

    // MARK: Hooks for subclasses

    /// Returns a snapshot of the document's contents, to be saved as type `typeName`. Override it
    /// (the default throws ``DocumentError/unsupportedFileType(_:)``).
    ///
    /// Called on the document queue, inside the coordinated write, just before the bytes are
    /// written. Return quickly: copy the model; the writing happens elsewhere. An error thrown
    /// here fails the save (with the usual ``DocumentState/savingError`` handling).
    open func contents(forType typeName: String) throws -> DocumentContents {
        throw DocumentError.unsupportedFileType(typeName)
    }

    /// Replaces the document's model with `contents` (read from a file of type `typeName`).
    /// Override it (the default throws ``DocumentError/unsupportedFileType(_:)``).
    ///
    /// Called on the document queue, inside the coordinated read, by open and revert. Throw to
    /// reject the contents; the caller then gets ``DocumentError/couldNotLoad(_:underlying:)``.
    /// Make it all-or-nothing: parse first, then replace the model, so a rejected file leaves
    /// the old contents in place.
    open func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        throw DocumentError.unsupportedFileType(typeName ?? TypeIdentifiers.data)
    }

    // MARK: Errors

    /// Called on the document queue when an operation fails: a save of any kind (explicit,
    /// autosave, close, asked for by a coordinator), an open or a revert — after ``lastError``
    /// was set. `userInteractionPermitted` is `false` for work nobody explicitly asked for
    /// (autosave, saves for other coordinators, reloads after another writer's change).
    ///
    /// The default calls ``finishedHandlingError(_:recovered:)`` with `recovered: false`.
    /// Overrides must eventually call it too.
    open func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        finishedHandlingError(error, recovered: false)
    }

    /// Tells the document that the handling of `error` is over. The default does nothing.
    open func finishedHandlingError(_ error: any Error, recovered: Bool) {}

    // MARK: Editing

    /// Called on the document queue right after the state gains ``DocumentState/editingDisabled``
    /// (while another coordinator writes the file, during a revert or a reload). Stop accepting
    /// edits. The default does nothing.
    open func disableEditing() {}

    /// Called on the document queue when editing may resume, just before the state loses
    /// ``DocumentState/editingDisabled`` (also when the document is closed while disabled, so the
    /// calls always pair up). The default does nothing.
    open func enableEditing() {}

    // MARK: Internal knobs (tests, diagnostics)

    /// The size from which this document publishes a progress (default 1 MiB). Any thread.
    var progressThreshold: Int {
        get { storage.withLock { $0.progressThreshold } }
        set { storage.withLock { $0.progressThreshold = newValue } }
    }

    /// Called on the document queue after every save attempt (explicit, autosave, close,
    /// for a coordinator) with the URL saved or the error. Any thread.
    var saveObserver: (@Sendable (Result<URL, any Error>) -> Void)? {
        get { storage.withLock { $0.saveObserver } }
        set { storage.withLock { $0.saveObserver = newValue } }
    }

    /// The signed number of changes since the saved version (`nil` when it is not reachable by
    /// undo/redo). Any thread.
    var changeCount: Int? { storage.withLock { $0.changes.changeCount } }

    // MARK: FilePresenter

    /// The document's ``fileURL``. Any thread.
    public var presentedItemURL: URL? { fileURL }
}

/// One state change waiting to be announced, with the streams that existed when it happened.
struct StateAnnouncement {
    var state: DocumentState
    var recipients: [AsyncStream<DocumentState>.Continuation]
}

/// Every mutable property of a ``CloudDocument``, kept behind its lock.
struct DocumentStorage {
    var fileURL: URL
    var fileModificationDate: Date?
    var state: DocumentState = .closed
    /// Incremented by every open (and creating save of a closed document) and every close, so
    /// work started in one open session notices that the document was closed meanwhile.
    var session = 0
    var changes = ChangeTracker()
    var undoManager: DocumentUndoManager
    var autosaveInterval: Duration?
    var autosaveTask: Task<Void, Never>?
    var coordinationTimeout: Duration?
    var progress: Progress?
    var progressThreshold = CloudDocument.defaultProgressThreshold
    var lastError: (any Error)?
    /// How many reasons there are for ``DocumentState/editingDisabled`` (a writer holding the file,
    /// a revert, a pending reload).
    var editingDisabledCount = 0
    /// What the file looked like after the last open, save or revert.
    var diskIdentity: DiskIdentity?
    var streams: [Int: AsyncStream<DocumentState>.Continuation] = [:]
    var nextStreamID = 0
    var announcements: [StateAnnouncement] = []
    var isAnnouncing = false
    /// Test hook: called on the document queue after every save attempt, with its outcome.
    var saveObserver: (@Sendable (Result<URL, any Error>) -> Void)?

    init(fileURL: URL, undoManager: DocumentUndoManager) {
        self.fileURL = fileURL
        self.undoManager = undoManager
    }

    var isOpen: Bool { !state.contains(.closed) }
}
