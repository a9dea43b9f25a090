import Foundation
import Glibc
import SystemSupport

// The change monitor's part in making sync tools' conflict copies versions, live.
//
// The monitor already watches the folder of every presented item, so it sees a conflict copy of
// the item (`doc.sync-conflict-….txt` next to `doc.txt`) appear and disappear, whoever makes it: a
// sync tool renaming its temporary file, another program deleting the copy. Which names are
// copies, of which item, is the registered `SyncToolPolicy`'s to say (CloudDocuments' naming rules,
// `CloudDocuments/SyncTools/`; with no policy registered no name is a copy). It tells the item's
// presenters with the version messages `presentedItemDidGain(_:)` / `presentedItemDidLose(_:)` — the
// copy is a conflict version of the item (CloudDocuments' `FileVersion` lists it as one, with the
// same persistent identifier, the policy's `versionIdentifier`) — and never as a change of the item
// or a new subitem.
//
// As for presented items, changes made by a coordinator of this runtime are not reported from the
// kernel's events: `FileVersion` announces its own removals of copies (`resolve()`, `remove()`).
// A copy *created* by such a coordinator is announced when its write ends (nobody else would).
//
// Some tools leave no file under the real name (rclone bisync: `NAME..path1`, `NAME..path2`;
// `SyncToolConflictCopy.leavesOriginalMissing`). When such a copy of a presented item appears, the
// monitor waits until the folder has been quiet for `conflictSettleInterval` — so that nothing is
// renamed while the tool is still writing a copy or about to copy it to the other side — and then
// asks the policy to settle the conflict (`SyncToolPolicy.settleConflict`: CloudDocuments promotes
// the winning copy to the item's name in a coordinated write of this runtime, if it is still
// missing).

extension ChangeMonitor {
    /// A conflict copy of a presented item, in a watched folder.
    struct WatchedCopy: Sendable {
        let directory: String
        let copy: SyncToolConflictCopy
        var copyPath: String { CanonicalPath.join(directory, copy.name) }
        var originalPath: String { CanonicalPath.join(directory, copy.originalName) }
    }

    /// A report of the kernel about an entry of a watched folder that is not a presented item.
    struct OtherEntry: Sendable {
        let directory: String
        let name: String
        /// Whether one of the reports said the entry was created or moved in.
        var created: Bool
    }

    enum CopyChange { case gained, lost }

    /// How long a folder must stay without any report of the kernel before the policy is asked to
    /// settle a conflict whose tool left the original missing: longer than an rclone bisync run on
    /// a few files (0.1–0.2 s measured), so that the tool has copied both sides' copies before one
    /// is renamed.
    static let conflictSettleInterval: TimeInterval = 0.5

    /// Where settlements wait and run (the policy's settlement takes a coordinated write).
    static let promotions = DispatchQueue(label: "FileCoordination.conflictSettlements")

    /// The conflict copy of a presented item that the entry at `path` (a canonical path) is, if any.
    func conflictCopyOfWatchedItem(at path: String) -> WatchedCopy? {
        let (directory, name) = CanonicalPath.split(path)
        // Cheap for the usual case (a presented item, or a folder not watched): no set, no parse.
        let originals: Set<String>? = state.withLock { state in
            guard let watched = state.directories[directory], watched.names[name] == nil else { return nil }
            return Set(watched.names.keys)
        }
        guard let originals else { return nil }
        return Self.watchedCopy(directory: directory, name: name, originals: originals)
    }

    /// `name` in `directory` as a conflict copy of one of `originals` (the presented names there),
    /// by the registered policy.
    static func watchedCopy(directory: String, name: String, originals: Set<String>) -> WatchedCopy? {
        let policy = CoordinationRuntime.syncToolPolicy
        guard !originals.contains(name), policy.mayBeConflictCopy(named: name, ofAnyOf: originals),
              let copy = policy.conflictCopy(named: name, amongOriginals: originals),
              originals.contains(copy.originalName) else { return nil }
        return WatchedCopy(directory: directory, copy: copy)
    }

    /// Records what a copy was before a coordinated write of it (if not known already).
    static func noteCopyBeforeWrite(_ copy: WatchedCopy, stamp: FileIdentity, in state: inout State) {
        guard state.directories[copy.directory]?.copyStamps[copy.copy.name] == nil else { return }
        state.directories[copy.directory]?.copyStamps[copy.copy.name] = stamp
    }

    /// Records a copy after a coordinated write of it; true when the write created it.
    static func noteCopyAfterWrite(_ copy: WatchedCopy, stamp: FileIdentity, in state: inout State) -> Bool {
        guard var directory = state.directories[copy.directory] else { return false }
        let before = directory.copyStamps[copy.copy.name] ?? .missing
        directory.copyStamps[copy.copy.name] = stamp
        state.directories[copy.directory] = directory
        return before == .missing && stamp != .missing
    }

    /// Passes on the kernel's reports about entries that are conflict copies of presented items:
    /// a copy that appeared is a gained version, one that disappeared a lost one.
    func deliverCopyChanges(_ entries: [OtherEntry]) {
        guard !entries.isEmpty else { return }
        // The entries that may be copies (most are not: see `SyncToolPolicy.mayBeConflictCopy`),
        // with the presented names of their folder, in one visit of the state.
        let policy = CoordinationRuntime.syncToolPolicy
        let candidates: [(entry: OtherEntry, originals: Set<String>)] = state.withLock { state in
            entries.compactMap { entry in
                guard let names = state.directories[entry.directory]?.names,
                      policy.mayBeConflictCopy(named: entry.name, ofAnyOf: names.keys) else { return nil }
                return (entry, Set(names.keys))
            }
        }
        for (entry, originals) in candidates {
            guard let copy = Self.watchedCopy(directory: entry.directory, name: entry.name, originals: originals)
            else { continue }
            let path = copy.copyPath
            let stamp = Self.stamp(of: path)
            let change: CopyChange? = state.withLock { state in
                guard !Self.isBeingWritten(path, in: state), var directory = state.directories[entry.directory] else {
                    return nil
                }
                // Unknown before: it was there unless a report says it was just created.
                let wasPresent = directory.copyStamps[entry.name].map { $0 != .missing } ?? !entry.created
                let isPresent = stamp != .missing
                // A copy gone for good is forgotten (a later report of it is a new copy). Only a
                // coordinated write's record of a removal stays, until the kernel's late reports
                // of that removal have been read here.
                directory.copyStamps[entry.name] = isPresent ? stamp : nil
                state.directories[entry.directory] = directory
                if isPresent && !wasPresent { return .gained }
                if !isPresent && wasPresent { return .lost }
                return nil
            }
            if let change { announce(change, copy) }
            if copy.copy.leavesOriginalMissing, stamp != .missing { scheduleSettlement(of: copy) }
        }
    }

    /// Sends `presentedItemDidGain(_:)` or `presentedItemDidLose(_:)` for `copy` to the presenters
    /// of its original, asynchronously on their queues.
    func announce(_ change: CopyChange, _ copy: WatchedCopy) {
        let (registry, delivery) = target.withLock { ($0.registry, $0.delivery) }
        guard let registry, let delivery else { return }
        let reference = FileVersionReference(
            itemURL: CanonicalPath.url(for: copy.originalPath), url: CanonicalPath.url(for: copy.copyPath),
            persistentIdentifier: copy.copy.versionIdentifier, isConflict: true)
        let message: PresenterMessage = change == .gained ? .versionDidGain(reference) : .versionDidLose(reference)
        for address in registry.addresses(at: copy.originalPath) {
            delivery.send(PresenterRequest(presenter: address.id, presentedPath: address.path, message: message, borrow: nil),
                          answer: nil)
        }
    }

    /// Asks the policy to settle the conflict of `copy`'s original (promote the winning copy if the
    /// original is missing) once the folder has been quiet for ``conflictSettleInterval``. One
    /// pending settlement per original.
    private func scheduleSettlement(of copy: WatchedCopy) {
        let name = copy.copy.originalName
        let seen: UInt64? = state.withLock { state in
            guard var directory = state.directories[copy.directory],
                  directory.promotionsPending.insert(name).inserted else { return nil }
            state.directories[copy.directory] = directory
            return directory.generation
        }
        guard let seen else { return }
        settleWhenQuiet(directory: copy.directory, name: name, seen: seen)
    }

    private func settleWhenQuiet(directory: String, name: String, seen: UInt64) {
        Self.promotions.asyncAfter(deadline: .now() + Self.conflictSettleInterval) { [self] in
            let now: UInt64? = state.withLock { state in
                guard let generation = state.directories[directory]?.generation else { return nil }
                if generation == seen { state.directories[directory]?.promotionsPending.remove(name) }
                return generation
            }
            guard let now else { return }  // no longer watched
            guard now == seen else {
                settleWhenQuiet(directory: directory, name: name, seen: now)
                return
            }
            guard let runtime = target.withLock({ $0.runtime }) else { return }
            CoordinationRuntime.syncToolPolicy.settleConflict(
                ofItemAt: CanonicalPath.url(for: CanonicalPath.join(directory, name)), coordinator: Coordinator(runtime: runtime))
        }
    }
}
