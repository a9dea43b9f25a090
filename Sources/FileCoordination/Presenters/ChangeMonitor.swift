import Foundation
import Glibc
import Synchronization
import SystemSupport

/// Notices changes to presented items made outside its runtime's coordinators — by another
/// process or runtime (coordinated there, or not coordinated at all) — and tells the item's presenters with
/// `presentedItemDidChange()` (an `.itemDidChange` request through the runtime's
/// `PresenterDelivery`, like every other message), as Apple's system does "when it notices them".
/// One per `CoordinationRuntime`; its ``InotifyLoop`` (thread `FileCoordination.changes` and
/// `inotify` descriptor), once started (at the first presenter registered), lives as long as the
/// process, even if the runtime goes away: it is never stopped.
///
/// One `inotify` descriptor watches the *directory* of every presented item (documents are
/// usually replaced by rename, which a watch on the file itself would lose). The loop's thread
/// sleeps in `poll` until the kernel reports an event, gathers what follows for
/// ``gatherInterval`` and passes on each read's reports (``inotifyLoop(_:didReadBatch:)``, on that
/// thread, sorted out on the kernel's bytes: ChangeMonitor+Reading.swift); for an event on a presented item it compares
/// the item's stamp (its `FileIdentity`: device, inode, size, modification and change times, or
/// `FileIdentity.missing`) with the last one seen and
/// messages the presenters only when it differs. Reports are ignored while a coordinator of this
/// process writes the item, and the stamp is renewed when it is done, so presenters already told
/// by the coordinator are not told twice.
///
/// The same watch sees presented items **renamed, moved or deleted** by programs that do not
/// coordinate (ChangeMonitor+MovesAndDeletions.swift): their presenters follow a move
/// (`presentedItemDidMove(to:)`, through `Coordinator.item(at:didMoveTo:)`), and get
/// `accommodatePresentedItemDeletion` once an item has stayed missing for a grace interval — so a
/// sync tool's delete-then-rename replacement is a change, not a deletion.
///
/// The same watch on the folder also sees the sync tools' **conflict copies** of a presented item
/// come and go (ChangeMonitor+ConflictCopies.swift): their presenters get the version messages
/// `presentedItemDidGain(_:)` / `presentedItemDidLose(_:)`, never a subitem or item change.
///
/// A presented **folder** is also watched inside, with every folder below it (within a bound), so
/// its presenters hear of items created, changed, replaced or deleted anywhere below it without
/// coordination: `presentedSubitemDidAppear(at:)` / `presentedSubitemDidChange(at:)`
/// (ChangeMonitor+Subtrees.swift).
final class ChangeMonitor: Sendable, InotifyLoopClient {
    /// Where changes are reported: the runtime's registry and delivery, and the runtime itself
    /// (for the coordinated write of the sync-tool policy's settlement of a conflict), held
    /// weakly (they hold this monitor), set once by `attach`.
    struct Target {
        weak var registry: PresenterRegistry?
        weak var delivery: InProcessDelivery?
        weak var runtime: CoordinationRuntime?
    }
    let target = Locked(Target())

    init() {}

    /// Sets where changes are reported (called once by the runtime that owns this monitor).
    func attach(runtime: CoordinationRuntime) {
        target.withLock { $0 = Target(registry: runtime.registry, delivery: runtime.delivery, runtime: runtime) }
    }

    /// The stamp of the item at `path` (a canonical path): what was last seen of it, its identity
    /// (not following a final link) or `FileIdentity.missing`.
    static func stamp(of path: String) -> FileIdentity {
        FileIdentity.of(path, followingLinks: false) ?? .missing
    }

    struct Directory {
        var descriptor: Int32
        var names: [String: Int] = [:]
        /// The last stamp seen of each conflict copy of a watched name, by the copy's name (a copy
        /// gone is forgotten, except a coordinated removal's `FileIdentity.missing`); see
        /// ChangeMonitor+ConflictCopies.swift.
        var copyStamps: [String: FileIdentity] = [:]
        /// Counts the kernel's reports about this folder (to tell when it has settled).
        var generation: UInt64 = 0
        /// Watched names whose conflict settlement (`SyncToolPolicy.settleConflict`) is scheduled.
        var promotionsPending: Set<String> = []
    }

    struct State {
        /// The monitor's inotify loop, made by the first `watch` (and tried again by the next one
        /// if the system refused it).
        var loop: InotifyLoop?
        var directories: [String: Directory] = [:]
        var directoryByDescriptor: [Int32: String] = [:]
        var stamps: [String: FileIdentity] = [:]
        /// Watched paths being written by a coordinator of this process right now.
        var writing: [String: Int] = [:]
        /// How many `directories` entries use each watch descriptor: a watched folder moved
        /// keeps its descriptor, so its old and new paths may share one for a while.
        var descriptorUsers: [Int32: Int] = [:]
        /// Presented items found missing whose deletion is not reported yet (see
        /// ChangeMonitor+MovesAndDeletions.swift).
        var pendingDeletions: Set<String> = []
        /// Presented items moved out of a watched folder by a rename whose other half has not
        /// been read yet, by the rename's cookie (added to only on the loop's thread).
        var unmatchedMoves: [UInt32: String] = [:]
        /// How many presented names are save temporaries (`isSaveTemporary`): while there are
        /// none, the reports of save temporaries are set aside unread (ChangeMonitor+Reading.swift).
        var presentedSaveTemporaries = 0
        /// Presented items renamed to a sync tool's temporary name, by that name's path: the
        /// item's path, until the temporary file is renamed to its final name.
        var temporaries: [String: String] = [:]
        /// The stamp each watched item had when the monitor last reported a change of it (see
        /// ChangeMonitor+RemoteAnnouncements.swift): a coordinator of another process announcing
        /// the same change is then not passed on a second time.
        var reportedStamps: [String: FileIdentity] = [:]
        /// Presented folders whose subtree is watched (ChangeMonitor+Subtrees.swift).
        var treeRoots: Set<String> = []
        /// Every folder watched as part of a presented folder's subtree (the roots included).
        var treeFolders: [String: TreeFolder] = [:]
        /// The subtree folder of each watch descriptor that has one.
        var treeFolderByDescriptor: [Int32: String] = [:]
        /// How many entry names the subtree folders track in all (bounded by `subtreeNameLimit`).
        var trackedNameCount = 0
        /// Roots whose subtree could not be watched in full (`subtreeFolderLimit`, the kernel's
        /// limit): their presenters were told once.
        var truncatedRoots: Set<String> = []
        /// Truncated roots found while a presenter was being registered, whose presenters are told
        /// once the registration is complete (`sendOwedMessages`).
        var owedRoots: Set<String> = []
        /// The stamp of each subitem whose change a coordinator announced (this runtime's, or
        /// another process's through its message): the kernel's report of it is not passed on.
        var subitemAnnounced: [String: FileIdentity] = [:]
        /// The stamp of each subitem whose change the monitor reported: another process's
        /// message about the same change is not passed on.
        var subitemReported: [String: FileIdentity] = [:]
        /// Subitems found missing, or made and not closed yet, waiting for their folder to settle,
        /// by folder (ChangeMonitor+Subtrees.swift); each folder here has one timer running.
        var settling: [String: SettlingFolder] = [:]
        /// How many entries `settling` holds in all.
        var settlingCount = 0
        /// Subitems found back after they went missing, before the report of their return was
        /// read: that report is a change (a replacement).
        var returnedSubitems: Set<String> = []
    }
    let state = Locked(State())

    /// Starts watching `path` (a canonical item path) for one more presenter.
    func watch(_ path: String) {
        let (directory, name) = CanonicalPath.split(path)
        let stamp = Self.stamp(of: path)
        let startLoop: InotifyLoop? = state.withLock { state in
            var started: InotifyLoop?
            if state.loop == nil {
                guard let loop = try? InotifyLoop(name: "FileCoordination.changes", gatherInterval: Self.gatherInterval)
                else { return nil }
                state.loop = loop
                started = loop
            }
            if state.directories[directory] == nil, let loop = state.loop {
                // Added with the lock held: the loop's thread classifies the watch's reports
                // under the same lock, so it never reads one of a descriptor not recorded yet.
                guard case .success(let descriptor) = loop.addWatch(directory, mask: Self.watchedEvents) else {
                    return started  // missing folder: nothing to watch yet
                }
                state.directories[directory] = Directory(descriptor: descriptor)
                // A folder that moved keeps its descriptor: the new path takes its reports over.
                state.directoryByDescriptor[descriptor] = directory
                state.descriptorUsers[descriptor, default: 0] += 1
            }
            if let count = state.directories[directory]?.names[name] {
                state.directories[directory]?.names[name] = count + 1
            } else if state.directories[directory] != nil {
                state.directories[directory]?.names[name] = 1
                if Self.isSaveTemporary(name) { state.presentedSaveTemporaries += 1 }
            }
            if state.stamps[path] == nil { state.stamps[path] = stamp }
            return started
        }
        // The loop's thread holds the monitor (its client) for as long as the process lives.
        startLoop?.start { [self] _ in self }
        // A presented folder: watch inside it too (ChangeMonitor+Subtrees.swift). Called with
        // the registry's lock held: sends no message.
        watchTreeIfFolder(path, fromRegistry: true)
    }

    /// Stops watching `path` for one presenter.
    func unwatch(_ path: String) {
        let (directory, name) = CanonicalPath.split(path)
        state.withLock { state in
            guard var entry = state.directories[directory], let count = entry.names[name] else { return }
            if count > 1 {
                entry.names[name] = count - 1
                state.directories[directory] = entry
                return
            }
            entry.names.removeValue(forKey: name)
            if Self.isSaveTemporary(name) { state.presentedSaveTemporaries -= 1 }
            state.stamps.removeValue(forKey: path)
            state.reportedStamps.removeValue(forKey: path)
            Self.unwatchTree(path, in: &state)
            if entry.names.isEmpty {
                state.directories.removeValue(forKey: directory)
                let users = (state.descriptorUsers[entry.descriptor] ?? 1) - 1
                if users > 0 {
                    // The same folder is still watched under another path (it moved), or as part
                    // of a presented folder's subtree.
                    state.descriptorUsers[entry.descriptor] = users
                    if state.directoryByDescriptor[entry.descriptor] == directory {
                        if let other = state.directories.first(where: { $0.value.descriptor == entry.descriptor })?.key {
                            state.directoryByDescriptor[entry.descriptor] = other
                        } else {
                            state.directoryByDescriptor.removeValue(forKey: entry.descriptor)
                        }
                    }
                } else {
                    state.loop?.removeWatch(entry.descriptor)
                    state.descriptorUsers.removeValue(forKey: entry.descriptor)
                    state.directoryByDescriptor.removeValue(forKey: entry.descriptor)
                }
            } else {
                state.directories[directory] = entry
            }
        }
    }

    /// A coordinator of this process is about to write `path` (and, for a directory, maybe what
    /// is inside): the kernel's reports of that write are not passed on — the coordinator tells the
    /// presenters itself. `isPresentedItem`: the caller knows `path` is a presented item, so it is
    /// no conflict copy of one (saves the look).
    func beginCoordinatedWrite(_ path: String, isPresentedItem: Bool = false) {
        let copy = isPresentedItem ? nil : conflictCopyOfWatchedItem(at: path)
        let copyStamp = copy.map { _ in Self.stamp(of: path) }
        state.withLock { state in
            guard !state.stamps.isEmpty else { return }
            state.writing[path, default: 0] += 1
            if let copy, let copyStamp { Self.noteCopyBeforeWrite(copy, stamp: copyStamp, in: &state) }
        }
    }

    /// The coordinated write of `path` is over: renew the stamps at and inside `path`, so reports of
    /// that write read later from the kernel are recognised and not passed on a second time.
    /// `isPresentedItem` as for ``beginCoordinatedWrite(_:isPresentedItem:)``.
    func endCoordinatedWrite(_ path: String, isPresentedItem: Bool = false) {
        let (affected, inTree): ([String], Bool) = state.withLock { state in
            guard state.writing[path] != nil else { return ([], false) }
            return (state.stamps.keys.filter { $0 == path || CanonicalPath.isInside($0, path) }, Self.isInWatchedTree(path, in: state))
        }
        let stamps = affected.map { ($0, Self.stamp(of: $0)) }
        let copy = isPresentedItem ? nil : conflictCopyOfWatchedItem(at: path)
        let copyStamp = copy.map { _ in Self.stamp(of: path) }
        let appearedCopy: WatchedCopy? = state.withLock { state in
            guard let count = state.writing[path] else { return nil }
            for (watched, stamp) in stamps where state.stamps[watched] != nil { state.stamps[watched] = stamp }
            // Inside a presented folder: the coordinator tells the folder's presenters; the
            // kernel's reports of this write, read later, are not passed on (see
            // ChangeMonitor+Subtrees.swift).
            // (Its stamp is looked at with the lock held, as the monitor's decisions do.)
            if inTree { Self.noteCoordinatedSubitemWrite(path, stamp: Self.subitemStamp(of: path), in: &state) }
            if count <= 1 { state.writing.removeValue(forKey: path) } else { state.writing[path] = count - 1 }
            guard let copy, let copyStamp else { return nil }
            return Self.noteCopyAfterWrite(copy, stamp: copyStamp, in: &state) ? copy : nil
        }
        if let appearedCopy { announce(.gained, appearedCopy) }
    }

    /// True while a coordinator of this process writes `path` or a directory containing it.
    static func isBeingWritten(_ path: String, in state: State) -> Bool {
        guard !state.writing.isEmpty else { return false }
        return state.writing.keys.contains { $0 == path || CanonicalPath.isInside(path, $0) }
    }

    /// Passes on one read's reports: moves of presented items first (their presenters follow),
    /// then changes and disappearances of presented items, then conflict copies, then what
    /// happened inside presented folders. On the loop's thread: reports are passed on in the
    /// order they were read.
    func handle(_ reports: [Report], _ treeReports: [TreeReport], mayFinishMoves: Bool, loop: InotifyLoop) {
        loop.assertInLoop()
        let moved = followMoves(in: reports, mayFinishMoves: mayFinishMoves)
        var touched: [String] = []
        var others: [OtherEntry] = []
        var otherIndex: [String: Int] = [:]   // by path, into `others`
        for report in reports {
            switch report.subject {
            case .watched(let path):
                if !moved.sources.contains(path) && !touched.contains(path) { touched.append(path) }
            case .other(let directory):
                let key = CanonicalPath.join(directory, report.name)
                if moved.destinations.contains(key) { continue }
                let created = report.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0
                if let index = otherIndex[key] {
                    others[index].created = others[index].created || created
                } else {
                    otherIndex[key] = others.count
                    others.append(OtherEntry(directory: directory, name: report.name, created: created))
                }
            }
        }
        for path in touched { deliverIfChanged(path) }
        deliverCopyChanges(others)
        handleSubtree(treeReports, skipping: moved)
    }

    /// What one report of the kernel is about.
    enum Subject {
        /// A presented item.
        case watched(String)
        /// Another entry of a watched folder (maybe a conflict copy of a presented item).
        case other(directory: String)
    }

    /// One report of the kernel, about an entry of a watched folder.
    struct Report {
        let subject: Subject
        let name: String
        let mask: UInt32
        /// Pairs the two halves of a rename (`IN_MOVED_FROM`, `IN_MOVED_TO`); 0 otherwise.
        let cookie: UInt32
    }

    /// Tells the presenters of `path` that it changed, if its stamp differs from the last one
    /// seen. An item found missing is not a change: its deletion is reported once it has stayed
    /// missing for a while (``scheduleDeletionCheck(_:)``), so a replacement by delete-then-rename
    /// is a change.
    func deliverIfChanged(_ path: String) {
        // Written by a coordinator of this process right now: it tells the presenters itself and
        // renews the stamp when done, so the item need not be examined.
        if state.withLock({ Self.isBeingWritten(path, in: $0) }) { return }
        let stamp = Self.stamp(of: path)
        let changed = state.withLock { state -> Bool in
            guard !Self.isBeingWritten(path, in: state), let previous = state.stamps[path], previous != stamp else { return false }
            state.stamps[path] = stamp
            Self.noteReported(path, stamp: stamp, in: &state)
            return true
        }
        guard changed else { return }
        if stamp == .missing {
            scheduleDeletionCheck(path)
            return
        }
        watchTreeIfFolder(path, fromRegistry: false)  // a presented folder made (again): watch inside
        let (registry, delivery) = target.withLock { ($0.registry, $0.delivery) }
        guard let registry, let delivery else { return }
        for address in registry.addresses(at: path) {
            delivery.send(PresenterRequest(presenter: address.id, presentedPath: address.path, message: .itemDidChange, borrow: nil),
                          answer: nil)
        }
    }
}
