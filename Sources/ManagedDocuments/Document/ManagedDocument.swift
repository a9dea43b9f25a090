import FoundationCompatibility
import CloudDocuments
import Foundation
import SystemSupport
import Ubiquity

/// A document whose contents are a record store, synced record by record between devices:
/// Apple's `UIManagedDocument` with Core Data's ubiquitous store, built the way it should have
/// worked (Docs/ManagedDocument.md).
///
/// The document is a package (a folder, e.g. `Todos.mdoc/`) holding the local SQLite store at
/// `StoreContent/persistentStore`; the store never leaves the device. With
/// ``persistentStoreOptions`` naming the store in a container
/// (``NSPersistentStoreUbiquitousContentNameKey``, ``NSPersistentStoreUbiquitousContentURLKey``),
/// every save also writes the changes as a change log into the container's data scope, and the
/// document imports the other devices' logs as they arrive, merging per attribute (the later
/// write wins by hybrid logical clock, ties by device id), then posts
/// ``Foundation/Notification/Name/NSPersistentStoreDidImportUbiquitousContentChanges`` on the
/// main actor. Problems are posted as ``Foundation/Notification/Name/ManagedDocumentImportDidFail``.
///
/// ```swift
/// let document = ManagedDocument(fileURL: url, managedObjectModel: schema)
/// document.persistentStoreOptions = [NSPersistentStoreUbiquitousContentNameKey: "Todos",
///                                    NSPersistentStoreUbiquitousContentURLKey: container.url]
/// try await document.openOrCreate()
/// try document.managedObjectContext.insert("Task", ["title": "Buy milk"])
/// // saved by autosave, or now: try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
/// ```
///
/// Isolation as ``CloudDocument``: the context and the notifications are on the main actor; a
/// save writes the log and commits on the document's file-access queue; imports run on the
/// document's import queue (as soon as another device's file lands — an inotify watch of the
/// container, on a thread of its own, queues them — and every ``importInterval`` as a fallback)
/// and hop to the main actor to notify.
open class ManagedDocument: CloudDocument {
    /// The name of the store file in the package's `StoreContent/` folder (`UIManagedDocument`'s).
    nonisolated public static let persistentStoreName = "persistentStore"

    /// The schema of the store (Core Data's `managedObjectModel`).
    nonisolated public let managedObjectModel: ManagedSchema

    /// Where the app reads and changes records. Usable once the document is open or created.
    public let managedObjectContext: ManagedObjectContext

    /// The store's options (Core Data's): ``NSPersistentStoreUbiquitousContentNameKey``,
    /// ``NSPersistentStoreUbiquitousContentURLKey``, ``ManagedDocumentDeviceIdentifierKey``. Set
    /// them before opening; they are read when the store is opened.
    nonisolated public var persistentStoreOptions: [String: any Sendable]? {
        get { options.withLock { $0 } }
        set { options.withLock { $0 = newValue } }
    }

    /// How often the container is checked for other devices' logs while the document is open,
    /// besides the instant imports: the document watches the container with inotify and imports a
    /// log or baseline as soon as it is renamed into place (Syncthing, rclone and the sync agent
    /// all rename files into place), so this poll is only the fallback for what inotify cannot see
    /// (network and FUSE file systems changed from elsewhere). `nil` for no automatic imports at
    /// all, neither watched nor polled (call ``importChanges()``). Default 5 seconds. Set before
    /// opening.
    nonisolated public var importInterval: Duration? {
        get { interval.withLock { $0 } }
        set { interval.withLock { $0 = newValue } }
    }

    nonisolated let options = Locked<[String: any Sendable]?>(nil)
    nonisolated let interval = Locked<Duration?>(.seconds(5))
    /// Whether an import is queued on ``importQueue`` and not started yet (a burst of files
    /// arriving makes one import, not one per file).
    nonisolated let importScheduled = Locked(false)
    nonisolated let automaticImports = Locked(true)
    /// The open store and its import timer; `nil` while closed.
    nonisolated let engine = Locked<Engine?>(nil)
    nonisolated let importQueue: DispatchQueue
    // nonisolated(unsafe): written once in init (before the document is shared), read in deinit.
    nonisolated(unsafe) private var closeObserver: (any NSObjectProtocol)?

    struct Engine {
        var synchronizer: StoreSynchronizer
        var timer: (any DispatchSourceTimer)?
        /// The inotify watch of the container (``LogFolderWatch``); `nil` when imports are not
        /// automatic or inotify is unavailable.
        var watch: InotifyLoop?
    }

    /// Creates a closed document for the package at `fileURL` with the schema `managedObjectModel`.
    /// Autosave is on (every 5 seconds). Any thread.
    nonisolated public init(fileURL: URL, managedObjectModel: ManagedSchema) {
        self.managedObjectModel = managedObjectModel
        managedObjectContext = ManagedObjectContext()
        importQueue = DispatchQueue(label: "ManagedDocuments.import")
        super.init(fileURL: fileURL)
        managedObjectContext.document = self
        autosaveInterval = .seconds(5)
        closeObserver = NotificationCenter.default.addObserver(forName: CloudDocument.stateChangedNotification, object: self,
                                                               queue: nil) { [weak self] note in
            guard let state = note.userInfo?[CloudDocument.stateUserInfoKey] as? DocumentState, state.contains(.closed) else { return }
            self?.stopEngine()
        }
    }

    deinit {
        if let closeObserver { NotificationCenter.default.removeObserver(closeObserver) }
        stopEngine()
    }

    /// The local store's file inside the package at `url`.
    nonisolated public static func persistentStoreURL(inPackage url: URL) -> URL {
        url.appending(path: "StoreContent", directoryHint: .isDirectory).appending(path: persistentStoreName)
    }

    /// Opens the document if its package exists, else creates it (a save for creating). The
    /// first import runs before this returns.
    ///
    /// - Throws: what ``openThrowing()`` or ``saveThrowing(to:for:)`` throw, e.g.
    ///   `DocumentError.couldNotLoad` wrapping a ``ManagedStoreError`` (newer schema, damaged
    ///   store, no device identifier, bad options).
    public func openOrCreate() async throws {
        if FileManager.default.fileExists(atPath: fileURL.path) {
            try await openThrowing()
        } else {
            try await saveThrowing(to: fileURL, for: .forCreating)
        }
        await importChanges()
    }

    // MARK: Reading and writing (CloudDocument's steps)

    /// Opens the store in the package at `url` (off the main actor, inside the coordinated read)
    /// and imports what the container holds. A revert of an open document only imports.
    nonisolated open override func read(from url: URL) throws {
        if engine.withLock({ $0 == nil }) {
            // A package whose StoreContent folder has no store is one whose creation was
            // interrupted (killed between the two): the store is made now, and the import
            // fills it from the container (a store only ever holds what its logs hold).
            let store = Self.persistentStoreURL(inPackage: url)
            guard FileManager.default.fileExists(atPath: store.path)
                    || FileManager.default.fileExists(atPath: store.deletingLastPathComponent().path) else {
                throw DocumentError.fileNotFound(url)
            }
            try startEngine(packageURL: url)
        }
        try loadOnMainActor(.data(Data()), ofType: fileType)
    }

    /// Nothing to snapshot: the store holds the model. Returns empty contents.
    open override func contents(forType typeName: String) throws -> DocumentContents { .data(Data()) }

    /// Nothing to load: the context reads the opened store.
    open override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        automaticImports.withLock { $0 = managedObjectContext.automaticallyMergesChangesFromParent }
    }

    /// The save: creates the package and store when creating; then publishes the unsaved changes
    /// as one change log and commits them (see ``StoreSynchronizer/save()``). Off the main actor,
    /// inside the coordinated write.
    nonisolated open override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                                 safelyTo url: URL, for saveOperation: SaveOperation) throws {
        if engine.withLock({ $0 == nil }) {
            if saveOperation == .forCreating && FileManager.default.fileExists(atPath: url.path) {
                throw DocumentError.alreadyExists(url)
            }
            try FileManager.default.createDirectory(at: Self.persistentStoreURL(inPackage: url).deletingLastPathComponent(),
                                                    withIntermediateDirectories: true)
            try startEngine(packageURL: url)
        }
        guard let synchronizer = engine.withLock({ $0?.synchronizer }) else { throw ManagedStoreError.notOpen }
        let failures = try synchronizer.save()
        if !failures.isEmpty { deliver(SyncOutcome(failures: failures)) }
    }

    /// The package changed since the last save: another process of this device saved into the
    /// same store, or SQLite's own files moved. Not a conflict — the store merges every change —
    /// so nothing is kept as a conflict version: the save goes on.
    open override func resolveConflict(withCurrentContentsAt url: URL, ofType typeName: String,
                                       saving contents: DocumentContents) throws -> DocumentContents? {
        contents
    }

    /// Changes in the package are the store's own writes (SQLite's files, another process of
    /// this device saving into the same store, which the context reads directly): nothing to
    /// reload. The default would reopen the document.
    nonisolated open override func presentedItemDidChange() {}

    // MARK: Importing

    /// Imports the other devices' new logs now, whatever ``ManagedObjectContext/automaticallyMergesChangesFromParent``
    /// says, and posts the notifications (before returning). Does nothing when the document is closed.
    ///
    /// - Returns: what changed.
    @discardableResult
    public func importChanges() async -> ImportSummary {
        await withCheckedContinuation { (continuation: CheckedContinuation<SyncOutcome, Never>) in
            importQueue.async { [weak self] in
                guard let synchronizer = self?.engine.withLock({ $0?.synchronizer }) else {
                    continuation.resume(returning: SyncOutcome())
                    return
                }
                continuation.resume(returning: synchronizer.importChanges())
            }
        }.posted(by: self)
    }

    /// Queues one import on the import queue unless one is queued already (the watch calls it,
    /// from its thread, for each burst of arriving files). Never waits.
    nonisolated func scheduleImport() {
        let queue = importScheduled.withLock { scheduled -> Bool in
            defer { scheduled = true }
            return !scheduled
        }
        guard queue else { return }
        importQueue.async { [weak self] in
            // Cleared before importing: a file arriving during this import schedules the next.
            self?.importScheduled.withLock { $0 = false }
            self?.runImport()
        }
    }

    nonisolated func runImport() {
        guard automaticImports.withLock({ $0 }), let synchronizer = engine.withLock({ $0?.synchronizer }) else { return }
        let outcome = synchronizer.importChanges()
        if !outcome.summary.isEmpty || !outcome.failures.isEmpty || outcome.joinedUnsavedChanges { deliver(outcome) }
    }

    /// Posts `outcome` on the main actor (in order: the main queue is FIFO).
    nonisolated func deliver(_ outcome: SyncOutcome) {
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated { if let self { _ = outcome.posted(by: self) } }
        }
    }

    // MARK: The engine

    nonisolated private func startEngine(packageURL: URL) throws {
        let options = persistentStoreOptions ?? [:]
        let device: String
        if let given = options[ManagedDocumentDeviceIdentifierKey] as? String {
            guard DeviceIdentifier.isValid(given) else {
                throw ManagedStoreError.unavailable(reason: "the device identifier “\(given)” is not 1 to 64 letters, digits, - and _")
            }
            device = given
        } else {
            do { device = try DeviceIdentifier.current() } catch { throw ManagedStoreError.unavailable(reason: error.localizedDescription) }
        }
        var folder: LogFolder?
        if let name = options[NSPersistentStoreUbiquitousContentNameKey] as? String {
            guard Self.isValidStoreName(name) else {
                throw ManagedStoreError.unavailable(reason: "the ubiquitous content name “\(name)” is not 1 to 64 letters, digits, -, _ and .")
            }
            let contentURL: URL
            if let given = options[NSPersistentStoreUbiquitousContentURLKey] as? URL {
                contentURL = given
            } else if let container = UbiquityAccount.shared.url(forUbiquityContainerIdentifier: nil) {
                contentURL = container
            } else {
                throw ManagedStoreError.unavailable(reason: "no ubiquity container: give NSPersistentStoreUbiquitousContentURLKey or set one up")
            }
            folder = LogFolder(contentURL: contentURL, storeName: name, device: device)
        }
        let synchronizer = try StoreSynchronizer(storePath: Self.persistentStoreURL(inPackage: packageURL).path,
                                                 schema: managedObjectModel, device: device, folder: folder)
        var timer: (any DispatchSourceTimer)?
        if let interval = importInterval, folder != nil {
            let made = DispatchSource.makeTimerSource(queue: importQueue)
            // Clamped to [1 ms, 1 day]: an absurd interval must not overflow the conversion.
            let seconds = min(max(interval.components.seconds, 0), 86_400)
            let nanoseconds = max(1_000_000, Int(seconds) * 1_000_000_000 + Int(interval.components.attoseconds / 1_000_000_000))
            made.schedule(deadline: .now(), repeating: .nanoseconds(nanoseconds))
            made.setEventHandler { [weak self] in self?.runImport() }
            timer = made
        }
        let watch = folder.flatMap { folder in
            importInterval == nil ? nil : LogFolderWatch.start(folder, retryInterval: .seconds(1)) { [weak self] in self?.scheduleImport() }
        }
        engine.withLock { $0 = Engine(synchronizer: synchronizer, timer: timer, watch: watch) }
        timer?.resume()
    }

    /// Stops importing and releases the store (on close).
    nonisolated func stopEngine() {
        let stopped = engine.withLock { engine -> Engine? in
            defer { engine = nil }
            return engine
        }
        stopped?.synchronizer.stop()
        stopped?.timer?.cancel()
        stopped?.watch?.stop()
    }

    nonisolated static func isValidStoreName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && !name.hasPrefix(".") && name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" || $0 == "."
        }
    }
}

extension SyncOutcome {
    init(failures: [ManagedStoreError]) {
        self.init()
        self.failures = failures
    }

    /// Posts the notifications for this outcome (on the main actor), marks the document dirty
    /// when imports wait for the next save, and returns the summary.
    @MainActor
    func posted(by document: ManagedDocument) -> ImportSummary {
        if joinedUnsavedChanges { document.updateChangeCount(.done) }
        for failure in failures {
            NotificationCenter.default.post(name: .ManagedDocumentImportDidFail, object: document,
                                            userInfo: [ManagedDocumentErrorKey: failure])
        }
        if !summary.isEmpty {
            NotificationCenter.default.post(name: .NSPersistentStoreDidImportUbiquitousContentChanges, object: document,
                                            userInfo: [NSInsertedObjectsKey: summary.inserted, NSUpdatedObjectsKey: summary.updated,
                                                       NSDeletedObjectsKey: summary.deleted])
        }
        return summary
    }
}
