import FileCoordination
import Foundation
import Synchronization

/// A document backed by a file or a file package: Apple's `UIDocument`, for Linux.
///
/// Subclass it and implement two hooks — ``contents(forType:)`` (return a snapshot of your model
/// as bytes or a ``FilePackage``) and ``load(fromContents:ofType:)`` (rebuild your model from
/// one) — and the document does the rest: coordinated, crash-safe opening and saving, change
/// tracking with undo, autosave, state notifications, and the right reaction when another
/// coordinator (or another process) reads, writes, moves or deletes the file.
///
/// ```swift
/// final class Note: CloudDocument {
///     var text = ""
///     override func contents(forType typeName: String) throws -> DocumentContents {
///         .data(Data(text.utf8))
///     }
///     override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
///         text = String(decoding: contents.data ?? Data(), as: UTF8.self)
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
/// Each operation comes in three forms: `async` returning whether it succeeded (Apple's
/// `open() async -> Bool`), `async throws` giving the error (``openThrowing()``,
/// ``saveThrowing(to:for:)``, ``closeThrowing()``, ``revertThrowing(toContentsOf:)``), and with a
/// completion handler that may be `nil` (`open(completionHandler:)`; the label is required, so
/// `await document.open()` is always the `async` form).
///
/// ## Isolation (as `UIDocument`)
/// The class is `@MainActor`. The compiler therefore checks what used to be a comment: a
/// subclass's plain stored properties are main-actor state, and every hook that touches them runs
/// on the main actor:
/// - **On the main actor:** ``contents(forType:)``, ``load(fromContents:ofType:)``,
///   ``fileAttributesToWrite(to:for:)``, ``handleError(_:userInteractionPermitted:)``,
///   ``finishedHandlingError(_:recovered:)``, ``userInteractionNoLongerPermitted(forError:)``,
///   ``disableEditing()``, ``enableEditing()``, the posting of ``stateChangedNotification`` and
///   the yielding to ``stateChanges``, and completion handlers.
/// - **Off the main actor** (on the document's serial file-access queue, see
///   ``performAsynchronousFileAccess(_:)``): waiting for coordination, reading bytes
///   (``read(from:)``, which hops to the main actor for `load`), writing bytes
///   (``writeContents(_:andAttributes:safelyTo:for:)``). The main actor is only held for the hooks.
/// - **On ``presentedItemOperationQueue``:** the ``FilePresenter`` messages (`nonisolated`
///   methods, overridable); they hop to the main actor for anything that touches the model.
///
/// Lifecycle operations are serialized (FIFO): each waits for the ones called before it. Saves
/// asked for by other coordinators (`savePresentedItemChanges`) run at once instead — waiting
/// behind an operation that waits for that very coordinator would deadlock.
///
/// The main actor must be running for a document to work: in an app or a program with
/// `static func main() async` (or top-level `await`), it is. Do not block the main thread waiting
/// for a document operation, and do not make synchronous coordinated accesses of an open
/// document's file on the main thread (the coordinator may need the document's main-actor hooks).
///
/// Read-only state (``fileURL``, ``documentState``, ``hasUnsavedChanges``, ``progress``, …),
/// ``updateChangeCount(_:)`` and ``undoManager`` are `nonisolated` and may be used from any
/// thread; the document keeps them behind its own lock.
@MainActor
open class CloudDocument: FilePresenter {
    // MARK: Stored properties

    /// Every mutable property. Never held while calling out.
    nonisolated let storage: Locked<DocumentStorage>
    /// The serial queue on which presenter messages arrive (they hop to the main actor for the
    /// hooks). `cancelAllOperations()` on it cancels only the `Operation` objects you added: the
    /// presenter messages coordinators deliver, and every block added with `addOperation(_:)`
    /// ignore `cancel()` (a coordinator waiting for a cancelled message would wait forever).
    nonisolated public let presentedItemOperationQueue: OperationQueue
    /// The dispatch queue under the presenter operation queue (owned here:
    /// `OperationQueue.underlyingQueue` does not keep it alive on Linux).
    nonisolated let documentDispatchQueue: DispatchQueue
    /// Serializes the lifecycle operations (FIFO); their blocking work runs on its thread.
    nonisolated let lifecycleQueue: DispatchQueue
    /// Runs the saves other coordinators ask for (`savePresentedItemChanges`), off the document
    /// queue and outside the lifecycle FIFO.
    nonisolated let presenterSaveQueue: DispatchQueue
    /// Held while a save writes, so two saves of this document (a lifecycle save
    /// and one asked for by another coordinator) never write at the same time, and while a revert
    /// reads and loads, so a reload never lands inside a save (the document's coordinators share
    /// one lock owner: its reads do not wait for its own writes). Only taken inside a coordinated
    /// access, after the coordination locks: a save or revert waiting for those never holds it.
    nonisolated let saveLock = NSLock()
    /// The version store bound with `VersionStore.override` (tests) when the document was made,
    /// or `nil` for the standard one. The document's own version calls run on its queues, which do
    /// not inherit task-local values, so they bind it again (`withVersionStore`).
    nonisolated let versionStoreOverride = VersionStore.override
    /// The coordination runtime the document coordinates in and registers with as the presenter
    /// of its file: the process's (`CoordinationRuntime.process`, what `Coordinator(filePresenter:)`
    /// and `Coordinator.addFilePresenter` use) unless made with `init(fileURL:runtime:)`.
    nonisolated let runtime: CoordinationRuntime

    /// The size from which loading and saving publish a `Progress` and the state
    /// ``DocumentState/progressAvailable``: 1 MiB. Each document copies it at creation; tests
    /// lower the copy (`progressThreshold`), so parallel tests do not disturb each other.
    nonisolated static let defaultProgressThreshold = 1 << 20

    /// The key of ``stateChangedNotification``'s `userInfo` entry holding the announced
    /// ``DocumentState`` (the state the notification is about; ``documentState`` may already be
    /// newer when an observer runs).
    nonisolated public static let stateUserInfoKey = "CloudDocumentState"

    /// Posted on the main actor after every change of ``documentState``, once per change, in
    /// order; `object` is the document, `userInfo[stateUserInfoKey]` the new state.
    nonisolated public static let stateChangedNotification = Notification.Name("CloudDocumentStateChangedNotification")

    // MARK: Creating

    /// Creates a closed document for the file (or package) at `fileURL`. Nothing is read until
    /// ``open()``. Any thread.
    nonisolated public init(fileURL: URL) {
        SyncToolRules.registerWithCoordination()  // before it presents or coordinates (see its doc)
        let undoManager = DocumentUndoManager()
        runtime = .process
        storage = Locked(DocumentStorage(fileURL: fileURL, undoManager: undoManager))
        (presentedItemOperationQueue, documentDispatchQueue, lifecycleQueue, presenterSaveQueue) = Self.queues(for: fileURL)
        wire(undoManager)
    }

    /// Creates a closed document that coordinates in `runtime` instead of the process's (tests: a
    /// runtime with its own lock directory and presenters). Any thread.
    nonisolated package init(fileURL: URL, runtime: CoordinationRuntime) {
        SyncToolRules.registerWithCoordination()  // before it presents or coordinates (see its doc)
        let undoManager = DocumentUndoManager()
        self.runtime = runtime
        storage = Locked(DocumentStorage(fileURL: fileURL, undoManager: undoManager))
        (presentedItemOperationQueue, documentDispatchQueue, lifecycleQueue, presenterSaveQueue) = Self.queues(for: fileURL)
        wire(undoManager)
    }

    /// The document's queues: the presenter queue (and the dispatch queue under it), the lifecycle
    /// queue and the presenter-save queue.
    ///
    /// Every queue runs on its own serial dispatch queue rather than on the global pool: the
    /// document's background work blocks (waiting for coordination locks, for the disk), and
    /// work queued behind blocked global threads can wait a long time for libdispatch to add a
    /// thread (about a second on a 2-CPU machine). Private serial queues always get a thread.
    nonisolated private static func queues(for fileURL: URL)
        -> (presenter: OperationQueue, presenterDispatch: DispatchQueue, lifecycle: DispatchQueue, presenterSave: DispatchQueue) {
        let name = fileURL.lastPathComponent
        let (presenter, presenterDispatch) = serialQueue(named: "CloudDocument \(name)", DocumentOperationQueue())
        return (presenter, presenterDispatch, DispatchQueue(label: "CloudDocument.lifecycle \(name)"),
                DispatchQueue(label: "CloudDocument.presenterSave \(name)"))
    }

    /// A serial `OperationQueue` on a dispatch queue of its own. Both are returned because
    /// `underlyingQueue` is unowned on Linux: the document keeps the dispatch queue alive.
    nonisolated private static func serialQueue(named name: String, _ queue: OperationQueue) -> (OperationQueue, DispatchQueue) {
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
        runtime.removeFilePresenter(self)
    }

    // MARK: Identity

    /// The location of the document. Changes when a save writes to another URL, when a revert
    /// reads another URL, and when a coordinated move moves the file. Any thread.
    nonisolated public var fileURL: URL { storage.withLock { $0.fileURL } }

    /// The type identifier of the file, from its extension (see ``TypeIdentifiers``). Any thread.
    nonisolated public var fileType: String? {
        // Remembered per URL: reading a URL's extension costs microseconds, and every save asks.
        let (url, cached) = storage.withLock { ($0.fileURL, $0.fileTypeCache) }
        if let cached, cached.url == url { return cached.type }
        let type = TypeIdentifiers.typeIdentifier(for: url)
        storage.withLock { if $0.fileURL == url { $0.fileTypeCache = (url, type) } }
        return type
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
    nonisolated public var localizedName: String {
        fileURL.deletingPathExtension().lastPathComponent
    }

    /// When the file was last modified, as of the last open, save or revert; `nil` before the
    /// first of those.
    nonisolated public var fileModificationDate: Date? { storage.withLock { $0.fileModificationDate } }

    // MARK: State

    /// The current state. Changes are announced (on the main actor) through
    /// ``stateChangedNotification`` and ``stateChanges``.
    nonisolated public var documentState: DocumentState { storage.withLock { $0.state } }

    /// The progress of the load or save in progress while the state contains
    /// ``DocumentState/progressAvailable`` (`nil` otherwise). Its `totalUnitCount` is the number of
    /// bytes; `completedUnitCount` advances on the main actor as they are read or written.
    nonisolated public var progress: Progress? { storage.withLock { $0.progress } }

    /// The error most recently passed to ``handleError(_:userInteractionPermitted:)``, if any.
    nonisolated public var lastError: (any Error)? { storage.withLock { $0.lastError } }

    /// Each change of ``documentState``, in order, exactly once per change.
    ///
    /// Every access returns a **new** stream, which receives the changes made after it was
    /// created (not the current state), unboundedly buffered, yielded on the main actor
    /// right after the corresponding notification is posted. The stream ends when the document is
    /// deallocated; stop iterating (or cancel the task) to unsubscribe earlier.
    nonisolated public var stateChanges: AsyncStream<DocumentState> {
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
    nonisolated public var coordinationTimeout: Duration? {
        get { storage.withLock { $0.coordinationTimeout } }
        set { storage.withLock { $0.coordinationTimeout = newValue } }
    }

    // MARK: Change tracking

    /// Whether there are changes not yet saved: the current version differs from the one last
    /// saved, opened or reverted to (see ``updateChangeCount(_:)``). Any thread.
    nonisolated public var hasUnsavedChanges: Bool { storage.withLock { $0.changes.hasUnsavedChanges } }

    /// Records a change: `.done` and `.redone` add one, `.undone` removes one, `.cleared` marks the
    /// current contents as saved. The undo manager calls this for you. Any thread.
    ///
    /// Tracking uses change tokens: a save marks as saved the version it snapshotted, so a change
    /// made while a save is in flight keeps the document dirty, and undoing back to the saved
    /// version makes it clean.
    nonisolated public func updateChangeCount(_ change: ChangeKind) {
        storage.withLock { $0.changes.record(change) }
    }

    /// The undo manager whose undo, redo and new actions drive the change count. Setting another
    /// one unhooks the old one (it stops affecting this document) and hooks the new one. Any
    /// thread; use the manager itself from one thread at a time.
    nonisolated public var undoManager: DocumentUndoManager {
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

    nonisolated private func wire(_ manager: DocumentUndoManager) {
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
    nonisolated public var autosaveInterval: Duration? {
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
    /// Called on the main actor when the save runs (before the bytes are written off the main
    /// actor). Return quickly: copy the model; the writing happens elsewhere. An error thrown
    /// here fails the save (with the usual ``DocumentState/savingError`` handling).
    open func contents(forType typeName: String) throws -> DocumentContents {
        throw DocumentError.unsupportedFileType(typeName)
    }

    /// Replaces the document's model with `contents` (read from a file of type `typeName`).
    /// Override it (the default throws ``DocumentError/unsupportedFileType(_:)``).
    ///
    /// Called on the main actor by ``read(from:)`` (so by open and revert), while the coordinated
    /// read is held. Throw to
    /// reject the contents; the caller then gets ``DocumentError/couldNotLoad(_:underlying:)``.
    /// Make it all-or-nothing: parse first, then replace the model, so a rejected file leaves
    /// the old contents in place.
    open func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        throw DocumentError.unsupportedFileType(typeName ?? TypeIdentifiers.data)
    }

    // MARK: Errors

    /// Called on the main actor when an operation fails: a save of any kind (explicit,
    /// autosave, close, asked for by a coordinator), an open or a revert — after ``lastError``
    /// was set. `userInteractionPermitted` is `false` for work nobody explicitly asked for
    /// (autosave, saves for other coordinators, reloads after another writer's change).
    ///
    /// The default calls ``finishedHandlingError(_:recovered:)`` with `recovered: false`.
    /// Overrides must eventually call it too.
    open func handleError(_ error: any Error, userInteractionPermitted: Bool) {
        finishedHandlingError(error, recovered: false)
    }

    /// Tells the document that the handling of `error` is over. On the main actor. Overrides
    /// must call `super`: the default forgets the error, so that
    /// ``userInteractionNoLongerPermitted(forError:)`` is not called for it any more.
    open func finishedHandlingError(_ error: any Error, recovered: Bool) {
        storage.withLock { $0.errorAwaitingUser = nil }
    }

    /// Called on the main actor when the user can no longer be involved in handling `error` —
    /// passed to ``handleError(_:userInteractionPermitted:)`` with `userInteractionPermitted:
    /// true` and not yet finished — because the document is closing (``close()``, or its file
    /// was deleted). Dismiss whatever you showed. The default calls
    /// ``finishedHandlingError(_:recovered:)`` with `recovered: false`.
    open func userInteractionNoLongerPermitted(forError error: any Error) {
        finishedHandlingError(error, recovered: false)
    }

    // MARK: Editing

    /// Called on the main actor right after the state gains ``DocumentState/editingDisabled``
    /// (while another coordinator writes the file, during a revert or a reload). Stop accepting
    /// edits. The default does nothing.
    open func disableEditing() {}

    /// Called on the main actor when editing may resume, just before the state loses
    /// ``DocumentState/editingDisabled`` (also when the document is closed while disabled, so the
    /// calls always pair up). The default does nothing.
    open func enableEditing() {}

    // MARK: Reading and writing steps (CloudDocument+FileAccess.swift)

    /// Reads the document's contents from `url` and loads them. Called by open and revert off
    /// the main actor, on the document's file-access queue, inside the coordinated read of `url`.
    ///
    /// The default reads the file (or the whole package) at `url` — publishing a ``progress`` for
    /// files of at least 1 MiB — and passes the contents to ``loadOnMainActor(_:ofType:)``, which
    /// calls ``load(fromContents:ofType:)`` on the main actor. Override it to read differently
    /// (in part, a custom format, a stream); deliver what you read with
    /// ``loadOnMainActor(_:ofType:)`` (or call `super.read(from:)`).
    ///
    /// - Throws: ``DocumentError/fileNotFound(_:)``, ``DocumentError/notReadable(_:underlying:errno:)``,
    ///   ``DocumentError/couldNotLoad(_:underlying:)``; what an override throws. The open or
    ///   revert then fails with that error.
    nonisolated open func read(from url: URL) throws {
        try defaultRead(from: url)
    }

    /// The file attributes a save to `url` sets on the written file, e.g.
    /// `[.posixPermissions: 0o644]`, `[.modificationDate: date]` (what
    /// `FileManager.setAttributes(_:ofItemAtPath:)` accepts). Called on the main actor with the
    /// snapshot. The default returns none (the file keeps the mode a ``SafeSave`` gives it).
    ///
    /// - Throws: to fail the save.
    open func fileAttributesToWrite(to url: URL, for saveOperation: SaveOperation) throws -> [FileAttributeKey: any Sendable] {
        [:]
    }

    /// Writes a snapshot to `url` safely: a failure or a crash midway leaves the original as it
    /// was. Called by every save off the main actor, on the document's file-access queue (or, for
    /// a save another coordinator asked for, its own thread), inside the coordinated write.
    ///
    /// The default writes with ``SafeSave`` (temporary file, fsync, rename, fsync of the folder;
    /// ``DocumentError/alreadyExists(_:)`` for ``SaveOperation/forCreating`` when something is at
    /// `url`), reporting progress, then sets `attributes`. Override it to write another way; it
    /// need not call ``writeContents(_:to:for:originalContentsURL:)``.
    ///
    /// - Throws: A ``DocumentError`` from ``SafeSave``; what `FileManager.setAttributes` throws.
    nonisolated open func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                        safelyTo url: URL, for saveOperation: SaveOperation) throws {
        try defaultWriteContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
    }

    /// Writes a snapshot to `url` *in place*, without the temporary-file dance: the step a custom
    /// ``writeContents(_:andAttributes:safelyTo:for:)`` can build on (write to a place of its own,
    /// then move). Off the main actor. `originalContentsURL` is where the current version is,
    /// if any (`nil` when creating).
    ///
    /// The default writes the bytes with `Data.write(to:)` (not atomic), or a package with
    /// ``SafeSave/writePackage(_:to:creating:progress:)``.
    nonisolated open func writeContents(_ contents: DocumentContents, to url: URL, for saveOperation: SaveOperation,
                                        originalContentsURL: URL?) throws {
        try defaultWriteContents(contents, to: url, for: saveOperation, originalContentsURL: originalContentsURL)
    }

    // MARK: FilePresenter messages (CloudDocument+Presenter.swift)

    /// Another coordinator is about to read the file. The default gives it up at once.
    nonisolated open func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        defaultRelinquishPresentedItem(toReader: reader)
    }

    /// Another coordinator is about to write the file: the writer proceeds at once (it never
    /// waits for the main actor, so a coordinated write started on the main actor — resolving a
    /// `FileVersion`, say — does not deadlock), and on the main actor, in order, the state gains
    /// ``DocumentState/editingDisabled`` and ``disableEditing()`` is called. When the writer is
    /// done (the reacquirer), both are undone on the main actor.
    nonisolated open func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        defaultRelinquishPresentedItem(toWriter: writer)
    }

    /// Another coordinator is about to read the file: if the document has unsaved changes they are
    /// saved first (through `Coordinator(filePresenter: self)`, which joins the asker's locks, so
    /// this does not deadlock; the snapshot is taken on the main actor), then the handler is
    /// called — with the save's error if it failed (the reader then fails with
    /// ``CoordinationError/presenterFailed(_:)`` instead of reading stale contents).
    nonisolated open func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        defaultSavePresentedItemChanges(completionHandler: completionHandler)
    }

    /// The file is about to be deleted (a coordinator asks first), or was deleted by a program
    /// that did not coordinate (the change monitor reports it once the file has stayed missing).
    /// The document closes (on the main actor) without saving: state ``DocumentState/closed``,
    /// autosave stopped, presenter unregistered. Except when the file is already gone and the
    /// document has unsaved changes: it then stays open with them (``hasUnsavedChanges`` stays
    /// true, the state does not change), and its next save — explicit, autosave or on close —
    /// writes the file again at ``fileURL``. Then the handler is called.
    nonisolated open func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        defaultAccommodatePresentedItemDeletion(completionHandler: completionHandler)
    }

    /// The file's local copy is about to be evicted (files on demand). The default closes the
    /// document when it has no unsaved changes (nothing is lost: the server keeps the bytes, and
    /// opening the document again downloads them), and refuses with
    /// ``DocumentError/evictionRefused(_:)`` when it has some. Answered on the main actor.
    nonisolated open func accommodatePresentedItemEviction(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        defaultAccommodatePresentedItemEviction(completionHandler: completionHandler)
    }

    /// The file was moved (by a coordinated move, or renamed by a program that did not
    /// coordinate, within the folders the change monitor watches): ``fileURL`` follows it.
    nonisolated open func presentedItemDidMove(to newURL: URL) {
        defaultPresentedItemDidMove(to: newURL)
    }

    /// Another writer changed the file (told by a coordinator, or by the change monitor for
    /// uncoordinated changes). If the document has no unsaved changes and the file exists and is
    /// not what the document last read or wrote, it reloads it (as ``revert(toContentsOf:)`` does,
    /// with ``DocumentState/editingDisabled`` from now until the reload is done). Unsaved changes
    /// are kept: the document does not reload over them.
    nonisolated open func presentedItemDidChange() {
        defaultPresentedItemDidChange()
    }

    /// (Packages) An item inside the document's folder is about to be deleted. The default
    /// accepts at once.
    nonisolated open func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        completionHandler(nil)
    }
    /// (Packages) An item appeared inside the document's folder. The default does nothing.
    nonisolated open func presentedSubitemDidAppear(at url: URL) {}

    /// (Packages) An item inside the document's folder changed. The default does nothing.
    nonisolated open func presentedSubitemDidChange(at url: URL) {}

    /// (Packages) An item inside the document's folder moved. The default does nothing.
    nonisolated open func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {}

    /// A version of the file was added (by this document's save, or by any `FileVersion` call in
    /// this process). The default re-checks ``DocumentState/inConflict`` against the version
    /// store, off the presenter queue. Overrides should call `super`.
    nonisolated open func presentedItemDidGain(_ version: FileVersionReference) {
        scheduleConflictCheck()
    }

    /// A version of the file was removed. The default re-checks ``DocumentState/inConflict``
    /// (removing the last unresolved conflict version clears it). Overrides should call `super`.
    nonisolated open func presentedItemDidLose(_ version: FileVersionReference) {
        scheduleConflictCheck()
    }

    /// A conflict version of the file was resolved. The default re-checks
    /// ``DocumentState/inConflict`` (resolving the last one clears it). Overrides should call `super`.
    nonisolated open func presentedItemDidResolveConflict(_ version: FileVersionReference) {
        scheduleConflictCheck()
    }

    // MARK: Versions and conflicts

    /// Whether each save keeps the contents it overwrites as a (non-conflict) version of the file,
    /// so an app can offer "browse earlier versions" (`FileVersion.otherVersionsOfItem(at:)`).
    /// NSDocument's name; `false` by default. The version is added inside the save's coordinated
    /// write; if it cannot be added, the save fails with ``DocumentError/saveFailed(_:reason:errno:)``
    /// and the file is untouched. The store's bounds apply (Docs/Versions.md, "Bounds"). Any thread.
    nonisolated public var preservesVersions: Bool {
        get { storage.withLock { $0.preservesVersions } }
        set { storage.withLock { $0.preservesVersions = newValue } }
    }

    /// Called when a save is about to overwrite a file that changed since the document last read
    /// or wrote it (another process wrote it, coordinated or not): a chance to merge instead of
    /// leaving a conflict.
    ///
    /// Runs on the main actor, **inside the save's coordinated write** of the file: read the file
    /// at `url` directly (it holds the other writer's contents, and nobody cooperating changes it
    /// meanwhile); do not coordinate on it (that would fail with would-deadlock). `typeName` is the
    /// type being saved, `contents` what ``contents(forType:)`` returned for this save.
    ///
    /// Return the contents to write instead (the merge): then no conflict version is kept and the
    /// document does not gain ``DocumentState/inConflict``. If the merge also changes your model,
    /// update it here without recording a change, so the document is clean after the save. Return
    /// `nil` (the default) to keep the file's contents as an unresolved conflict version and write
    /// `contents` as the current version; the document then gains ``DocumentState/inConflict``.
    /// Throwing fails the save (``DocumentState/savingError``; the file is untouched).
    open func resolveConflict(withCurrentContentsAt url: URL, ofType typeName: String,
                              saving contents: DocumentContents) throws -> DocumentContents? {
        nil
    }

    // MARK: Internal knobs (tests, diagnostics)

    /// The size from which this document publishes a progress (default 1 MiB). Any thread.
    nonisolated var progressThreshold: Int {
        get { storage.withLock { $0.progressThreshold } }
        set { storage.withLock { $0.progressThreshold = newValue } }
    }

    /// Called on the main actor after every save attempt (explicit, autosave, close,
    /// for a coordinator) with the URL saved or the error. Any thread.
    nonisolated var saveObserver: (@Sendable (Result<URL, any Error>) -> Void)? {
        get { storage.withLock { $0.saveObserver } }
        set { storage.withLock { $0.saveObserver = newValue } }
    }

    /// The signed number of changes since the saved version (`nil` when it is not reachable by
    /// undo/redo). Any thread.
    nonisolated var changeCount: Int? { storage.withLock { $0.changes.changeCount } }

    // MARK: FilePresenter

    /// The document's ``fileURL``. Any thread.
    nonisolated public var presentedItemURL: URL? { fileURL }
}

/// One state change waiting to be announced, with the streams that existed when it happened.
struct StateAnnouncement {
    var state: DocumentState
    var recipients: [AsyncStream<DocumentState>.Continuation]
}

/// Every mutable property of a ``CloudDocument``, kept behind its lock.
struct DocumentStorage {
    /// Tells the reporter when `changes` went from clean to unsaved or back.
    mutating func reportUnsavedChanges() {
        let dirty = changes.hasUnsavedChanges
        guard dirty != reportedUnsavedChanges, let report = unsavedChangesReporter else { return }
        reportedUnsavedChanges = dirty
        report(dirty)
    }

    var fileURL: URL
    /// Every place the file has had since it was opened or saved somewhere new (``fileURL`` last).
    var locations: DocumentLocations
    /// ``CloudDocument/fileType`` and the URL it was worked out for.
    var fileTypeCache: (url: URL, type: String?)?
    var fileModificationDate: Date?
    var state: DocumentState = .closed
    /// Incremented by every open (and creating save of a closed document) and every close, so
    /// work started in one open session notices that the document was closed meanwhile.
    var session = 0
    var changes = ChangeTracker() {
        didSet { reportUnsavedChanges() }
    }
    /// Tells the runtime whether the document has unsaved changes (set while it is registered as
    /// a presenter: `startReportingUnsavedChanges`), so other processes skip save requests while
    /// it has none. Called under this storage's lock, in the same critical section as the change.
    var unsavedChangesReporter: (@Sendable (Bool) -> Void)?
    /// What the reporter was last told.
    var reportedUnsavedChanges: Bool?
    var undoManager: DocumentUndoManager
    var autosaveInterval: Duration?
    var autosaveTask: Task<Void, Never>?
    var coordinationTimeout: Duration?
    var progress: Progress?
    var progressThreshold = CloudDocument.defaultProgressThreshold
    var lastError: (any Error)?
    /// The error handed to `handleError` with user interaction permitted whose handling has not
    /// finished yet (see `userInteractionNoLongerPermitted(forError:)`).
    var errorAwaitingUser: (any Error)?
    /// Lifecycle operations (and `performAsynchronousFileAccess` blocks) queued or running.
    var pendingFileAccesses = 0
    /// What the current open or revert asked `read(from:)` to do (see `ReadRequest`).
    var readRequest: ReadRequest?
    /// Reports bytes written by the save in progress (set while its `writeContents` runs).
    var writeProgress: (@Sendable (Int64) -> Void)?
    /// How many reasons there are for ``DocumentState/editingDisabled`` (a writer holding the file,
    /// a revert, a pending reload).
    var editingDisabledCount = 0
    /// What the file looked like after the last open, save or revert.
    var diskIdentity: DiskIdentity?
    /// The version-store identity of the file (`ItemIdentityAttribute`) as last seen by an open,
    /// save or revert. A program that replaces the file (an atomic write) drops the attribute; the
    /// document's next save puts it back, so the file's versions stay one item wherever it moves.
    var itemIdentity: String?
    /// The bytes read or written with `diskIdentity`, kept only while that identity is racy
    /// (`RacyIdentity`): compared with the file's when its identity looks unchanged.
    var racyContents: Data?
    /// ``CloudDocument/preservesVersions``.
    var preservesVersions = false
    /// The save of the document's own file running on the lifecycle queue, if any (see
    /// ``RunningOwnSave``).
    var runningOwnSave: RunningOwnSave?
    var streams: [Int: AsyncStream<DocumentState>.Continuation] = [:]
    var nextStreamID = 0
    var announcements: [StateAnnouncement] = []
    var isAnnouncing = false
    /// Test hook: called on the main actor after every save attempt, with its outcome.
    var saveObserver: (@Sendable (Result<URL, any Error>) -> Void)?

    init(fileURL: URL, undoManager: DocumentUndoManager) {
        self.fileURL = fileURL
        self.locations = DocumentLocations(fileURL)
        self.undoManager = undoManager
    }

    var isOpen: Bool { !state.contains(.closed) }
}
