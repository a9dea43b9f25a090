import FileCoordination
import Foundation
import Glibc
import SystemSupport

extension FileVersion {
    /// Adds the file or folder at `contentsURL` as a new (non-conflict) version of the item at
    /// `url`, inside a coordinated write of the item. With `.byMoving` the contents are moved into
    /// the store (a rename when on its file system, e.g. from
    /// ``temporaryDirectoryURLForNewVersionOfItem(at:)``) and are gone from `contentsURL`.
    /// The store's bounding policy may then drop the item's oldest droppable versions (never the
    /// new one, never an unresolved conflict). Called from inside a coordinated access of the
    /// item, it runs inside that access (or pass the coordinator to use as `coordinator`).
    ///
    /// Throws ``FileVersionError``: `itemNotFound`, `contentsNotFound`, `unsupportedItem`,
    /// `coordinationFailed`, `storeFailed`. Then no version was added and `contentsURL` is untouched.
    @discardableResult
    public static func addOfItem(at url: URL, withContentsOf contentsURL: URL, options: AddingOptions = [],
                                 coordinator: Coordinator? = nil) throws(FileVersionError) -> FileVersion {
        try addVersion(ofItemAt: url, withContentsOf: contentsURL, byMoving: options.contains(.byMoving),
                       isConflict: false, savingComputer: hostName, coordinator: coordinator)
    }

    /// ``addOfItem(at:withContentsOf:options:coordinator:)`` with the version's kind and saving
    /// computer chosen: documents use it to keep the contents a save would have overwritten as an
    /// unresolved conflict version.
    static func addVersion(ofItemAt url: URL, withContentsOf contentsURL: URL, byMoving: Bool, isConflict: Bool,
                           savingComputer: String?, coordinator: Coordinator?) throws(FileVersionError) -> FileVersion {
        let store = VersionStore.standard
        return try coordinatedWrite(url, options: .contentIndependentMetadataOnly, coordinator: coordinator,
                                    announce: { version, itemURL in [.gained(version.reference(itemURL: itemURL))] }) {
            (itemURL) throws(FileVersionError) -> FileVersion in
            guard let item = try store.item(at: itemURL, creating: true) else { throw .itemNotFound(itemURL) }
            let record = try store.addVersion(
                of: item, contentsAt: VersionContents.withoutTrailingSlashes(PathBytes.path(of: contentsURL)), sourceURL: contentsURL,
                itemName: item.name, byMoving: byMoving, isConflict: isConflict,
                savingComputer: savingComputer)
            store.applyLimits(afterAdding: record, to: item.id)
            return FileVersion(record: record, itemID: item.id, itemURL: itemURL, store: store)
        }
    }

    /// Removes every other version of the item at `url` (conflict versions too), inside a
    /// coordinated write of the item. The current version is untouched. Throws
    /// ``FileVersionError``; a version another process removed meanwhile is not an error.
    ///
    /// As Apple advises, you may call it from inside your own coordinated write of the item (any
    /// options, `.forDeleting` included): it then runs inside that write, reusing its lock.
    ///
    /// Sync tools' conflict copies of the item are deleted too, each inside a coordinated write of
    /// the copy (`.forDeleting`) nested in the item's, so the sync tool carries the deletion to
    /// every device. Runs on the calling thread; presenters get `presentedItemDidLose(_:)` on
    /// their queues.
    public static func removeOtherVersionsOfItem(at url: URL, coordinator: Coordinator? = nil) throws(FileVersionError) {
        let store = VersionStore.standard
        let coordinator = Self.coordinator(forItemAt: url, given: coordinator)
        _ = try coordinatedWrite(url, options: .contentIndependentMetadataOnly, coordinator: coordinator,
                                 announce: { removed, itemURL in removed.map { .lost($0.reference(itemURL: itemURL)) } }) {
            (itemURL) throws(FileVersionError) -> [FileVersion] in
            // The copies are locked inside the item's write, through a coordinator joining it
            // (its waits bounded: see `coordinatedWrite`).
            var removed = try removeConflictCopies(ofItemAt: itemURL,
                                                   coordinator: Coordinator.joiningCurrentAccess(to: itemURL) ?? coordinator)
            let item: VersionStore.Item?
            do throws(FileVersionError) { item = try store.item(at: itemURL, creating: false) } catch {
                // A missing item whose copies were removed: nothing else to remove.
                if case .itemNotFound = error, !removed.isEmpty { return removed }
                throw error
            }
            guard let item else { return removed }
            store.sweep(item.id, insideCoordinatedWrite: true)
            for record in store.versions(of: item.id) {
                let version = FileVersion(record: record, itemID: item.id, itemURL: itemURL, store: store)
                do throws(FileVersionError) { try store.removeVersion(record.id, of: item.id) } catch {
                    if case .versionNotFound = error { continue }
                    throw error
                }
                removed.append(version)
            }
            return removed
        }
    }

    /// Removes this version from the store, inside a coordinated write of its item. Throws
    /// ``FileVersionError/isCurrentVersion(_:)`` for the current version,
    /// ``FileVersionError/versionNotFound(_:)`` when it is already gone.
    /// A sync tool's conflict copy is deleted, inside a coordinated write of the item and of the
    /// copy (locked in that order). Called from inside a coordinated access of the item, it runs
    /// inside that access.
    public func remove(coordinator: Coordinator? = nil) throws(FileVersionError) {
        if conflictCopyName != nil {
            try deleteConflictCopy(coordinator: coordinator, messages: { [.lost($0)] })
            return
        }
        guard let itemID else { throw .isCurrentVersion(url) }
        try Self.coordinatedWrite(currentItemURL, options: .contentIndependentMetadataOnly, coordinator: coordinator,
                                  announce: { _, itemURL in [.lost(reference(itemURL: itemURL))] }) {
            (_) throws(FileVersionError) in
            store.sweep(itemID, insideCoordinatedWrite: true)
            try store.removeVersion(persistentIdentifier.rawValue, of: itemID)
        }
    }

    /// Resolves this conflict version (see ``isResolved``), inside a coordinated write of its
    /// item (the caller's own, when called from inside one: see ``FileVersion``, "Threading and
    /// coordination"), and records it durably. Does nothing for a version that is not an
    /// unresolved conflict (nothing to do).
    /// For a sync tool's conflict copy, resolving deletes the copy (a coordinated write of the item
    /// and of the copy, `.forDeleting`); presenters get `presentedItemDidResolveConflict(_:)`, then
    /// `presentedItemDidLose(_:)`. Throws ``FileVersionError/versionNotFound(_:)`` when the copy is
    /// already gone.
    public func resolve(coordinator: Coordinator? = nil) throws(FileVersionError) {
        if conflictCopyName != nil {
            guard !isResolved else { return }
            try deleteConflictCopy(coordinator: coordinator, messages: { [.resolvedConflict($0), .lost($0)] })
            state.withLock { $0.isResolved = true }
            return
        }
        guard let itemID, !isResolved else { return }
        try Self.coordinatedWrite(currentItemURL, options: .contentIndependentMetadataOnly, coordinator: coordinator,
                                  announce: { _, itemURL in [.resolvedConflict(reference(itemURL: itemURL))] }) {
            (_) throws(FileVersionError) in
            guard var record = store.readVersionRecord(itemID, persistentIdentifier.rawValue) else {
                throw .versionNotFound(url)
            }
            record.isResolved = true
            try store.writeVersionRecord(record, itemID: itemID)
        }
        state.withLock { $0.isResolved = true }
    }

    /// Sets ``isDiscardable`` durably, inside a coordinated write of the item. Does nothing for
    /// the current version (which is never discardable) and for sync tools' conflict copies (which
    /// the store never drops).
    public func setDiscardable(_ discardable: Bool, coordinator: Coordinator? = nil) throws(FileVersionError) {
        guard let itemID, discardable != isDiscardable else { return }
        try Self.coordinatedWrite(currentItemURL, options: .contentIndependentMetadataOnly, coordinator: coordinator) {
            (_) throws(FileVersionError) in
            guard var record = store.readVersionRecord(itemID, persistentIdentifier.rawValue) else {
                throw .versionNotFound(url)
            }
            record.isDiscardable = discardable
            try store.writeVersionRecord(record, itemID: itemID)
        }
        state.withLock { $0.isDiscardable = discardable }
    }

    /// Where the item is now: its recorded path when the store knows it and something is there
    /// (the item may have moved since this object was made), else the URL it was found at.
    var currentItemURL: URL {
        if let itemID, let record = store.readItemRecord(itemID),
           (try? POSIX.linkStatus(record.path)) != nil,
           ItemIdentityAttribute.read(record.path) == itemID {
            return PathBytes.fileURL(record.path)
        }
        return itemURL
    }
}
