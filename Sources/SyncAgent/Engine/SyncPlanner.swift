import Foundation

/// Everything the planner looks at, gathered by one pass.
public struct SyncPlanInput: Sendable {
    /// The journal's entries: the state both sides had at the last sync.
    public var base: [String: JournalEntry]
    /// The local items, or `nil` when the container folder is missing.
    public var local: [String: LocalItem]?
    /// The server's items (the conflict area and the agent's own names left out).
    public var remote: [String: RemoteItem]
    /// The root's file identity now, and as the journal knew it.
    public var remoteRootFileID: String?
    public var knownRootFileID: String?
    /// Paths whose held local deletion the user approved.
    public var approvedDeletions: Set<String>
    /// Whether the user approved syncing an emptied local root as "everything deleted here".
    public var approvedEmptyRoot: Bool
    /// Local paths whose state is unknown (``LocalScan/uncertain``; `""`: all): an item under
    /// one that is missing here was not seen deleted, so nothing is planned for it.
    public var localUncertain: [String] = []
    /// The package documents (folded into one item each in `base`, `local` and `remote`): never
    /// matched as renames.
    public var packages: Set<String> = []
    /// Synced items that are missing here because they were evicted (only their placeholder is
    /// here, files on demand): nothing is planned for them — not a deletion, not a download —
    /// and they count as present for the emptied-root guard.
    public var evicted: [String] = []
    /// Synced files changed here that still have a placeholder beside them
    /// (``EvictedItems/writtenOver(known:local:in:)``): a conflict with the server's copy, never
    /// an upload over it.
    public var writtenOverEvicted: [String] = []
    /// Deletions carried out without approval by earlier passes within
    /// ``SyncGuards/deletionBurstWindow``: from the server (applied here) and made here (applied
    /// on the server). They count toward this pass's mass-deletion guard, so a deletion run
    /// that reaches the server one item at a time is held once, together, it is a mass deletion.
    public var earlierServerDeletions = 0
    /// The same for deletions made here and carried out on the server (see
    /// ``earlierServerDeletions``).
    public var earlierLocalDeletions = 0
    /// The time of the pass (seconds since 1970) for ``SyncGuards/recentAdditionWindow``, by
    /// default rounded down to the hour: the window is that coarse anyway, and idle passes then
    /// give equal inputs (so the engine can reuse the last plan).
    public var now = Int64(Date().timeIntervalSince1970) / 3600 * 3600

    public init(base: [String: JournalEntry], local: [String: LocalItem]?, remote: [String: RemoteItem],
                remoteRootFileID: String? = nil, knownRootFileID: String? = nil,
                approvedDeletions: Set<String> = [], approvedEmptyRoot: Bool = false) {
        self.base = base
        self.local = local
        self.remote = remote
        self.remoteRootFileID = remoteRootFileID
        self.knownRootFileID = knownRootFileID
        self.approvedDeletions = approvedDeletions
        self.approvedEmptyRoot = approvedEmptyRoot
    }
}

/// Decides, per item, what a pass does — a pure function of the journal's base, the local scan
/// and the server's listing (deterministic: the same input gives the same plan).
///
/// | base | local | server | step |
/// | --- | --- | --- | --- |
/// | — | file | — | upload (`If-None-Match: *`) |
/// | — | — | file | download |
/// | — | file | file | conflict (bytes compared: identical is no conflict) |
/// | known | unchanged | unchanged | nothing |
/// | known | changed | unchanged | upload (`If-Match` base tag) |
/// | known | unchanged | changed | download |
/// | known | changed | changed | conflict |
/// | known | deleted | unchanged | delete on the server |
/// | known | unchanged | deleted | delete here (guarded) |
/// | known | changed | deleted | upload (the edit wins) |
/// | known | deleted | changed | download (the edit wins) |
/// | known | deleted | deleted | forget |
/// | known, evicted | written without downloading | file | conflict (the server's copy keeps the name) |
///
/// Folders compare by existence only (their times and tags change with their children); a folder
/// is never deleted while something below it is kept or arrives. A package document arrives here
/// folded into one file-like item (``PackageView``) and is planned like a file, never matched as
/// a rename. An entry whose tag was read after an upload and not verified
/// (``JournalEntry/tagUnverified``) is compared once (a `conflict` step) even when both sides are
/// unchanged.
///
/// Guards: a missing local root, or an empty one while the journal knows at least two items, is
/// refused (an unmounted disk, not a deletion); more than ``SyncGuards/heldDeletionShare`` of the
/// items (from ``SyncGuards/heldDeletionShareMinimum`` items on) or more than
/// ``SyncGuards/heldDeletionMaximum`` items deleted by the server are held; a server whose root
/// identity changed, on which most known files carry tags never seen, or on which a file shows
/// again a tag it had before (a backup put back), is a new server:
/// nothing is deleted on either side and every file that differs is a conflict.
public struct SyncPlanner: Sendable {
    public var guards: SyncGuards

    public init(guards: SyncGuards = SyncGuards()) { self.guards = guards }

    /// The steps of one pass for `input`. Pure and deterministic: never throws, touches nothing;
    /// a situation it must not act on is a ``SyncPlan/refusal`` or held deletions. Any thread.
    public func plan(_ input: SyncPlanInput) -> SyncPlan {
        guard let local = input.local else {
            return SyncPlan(refusal: "the container folder is missing (an unmounted disk?): nothing is synced until it is back")
        }
        let knownItems = input.base.count
        if local.isEmpty, input.evicted.isEmpty, knownItems >= 2, !input.approvedEmptyRoot {
            return SyncPlan(refusal: "the container folder is empty while \(knownItems) items were synced "
                + "(an unmounted disk?): nothing is synced until it is back, or until you approve the deletions")
        }
        let replaced = isReplacedServer(input)
        var steps: [SyncStep] = replaced ? [] : moves(input, local: local)
        let moved = Set(steps.flatMap { step -> [String] in
            switch step {
            case .moveRemote(let source, let destination), .moveLocal(let source, let destination): [source, destination]
            default: []
            }
        })
        let paths = Set(input.base.keys).union(local.keys).union(input.remote.keys).subtracting(moved)
        let unknownHere = input.localUncertain + input.evicted
        let writtenOver = Set(input.writtenOverEvicted)
        for path in paths where !(local[path] == nil && Self.isUnder(path, unknownHere)) {
            if writtenOver.contains(path), local[path] != nil, let remote = input.remote[path], !remote.isFolder {
                steps.append(.conflict(path))
                continue
            }
            let step = replaced
                ? stepForNewServer(base: input.base[path], local: local[path], remote: input.remote[path], path: path)
                : step(base: input.base[path], local: local[path], remote: input.remote[path], path: path)
            if let step { steps.append(step) }
        }
        steps = keepFoldersOfKeptItems(steps)
        var plan = SyncPlan(serverReplaced: replaced)
        // Mass deletions wait for approval, both ways: those the server asks for here, and those
        // found here (a folder emptied by mistake, a disk half unmounted) before they reach it.
        plan.heldDeletions = holdMassDeletions(in: &steps, of: knownItems, earlier: input.earlierServerDeletions,
                                               approved: input.approvedDeletions) {
            if case .deleteLocal = $0 { true } else { false }
        }
        // A server put back to a copy older than the last additions shows nothing but those
        // additions gone: held like a mass deletion when they are most of what was added lately.
        plan.heldDeletions += holdRecentAdditionLoss(in: &steps, input)
        plan.heldLocalDeletions = holdMassDeletions(in: &steps, of: knownItems, earlier: input.earlierLocalDeletions,
                                                    approved: input.approvedDeletions) {
            if case .deleteRemote = $0 { true } else { false }
        }
        plan.steps = Self.ordered(steps)
        return plan
    }

    /// Removes the local deletions of files added within ``SyncGuards/recentAdditionWindow``
    /// when there are at least ``SyncGuards/recentAdditionMinimum`` of them and they are more than
    /// half of the files added in that window (not approved as a whole), and returns their paths.
    private func holdRecentAdditionLoss(in steps: inout [SyncStep], _ input: SyncPlanInput) -> [String] {
        let since = input.now - Int64(guards.recentAdditionWindow)
        let recent = Set(input.base.values.filter { !$0.isFolder && ($0.addedAt ?? .min) >= since }.map(\.path))
        guard !recent.isEmpty else { return [] }
        let deletions = steps.compactMap { step -> String? in
            if case .deleteLocal(let path) = step, recent.contains(path) { path } else { nil }
        }
        guard deletions.count >= guards.recentAdditionMinimum, deletions.count * 2 > recent.count,
              !Set(deletions).isSubset(of: input.approvedDeletions) else { return [] }
        let held = Set(deletions)
        steps.removeAll { if case .deleteLocal(let path) = $0 { held.contains(path) } else { false } }
        return deletions.sorted()
    }

    /// Removes the deletions `isDeletion` picks from `steps` when they — with the `earlier`
    /// unapproved ones of the same direction in the burst window — are a mass deletion not
    /// approved as a whole, and returns their paths (sorted; empty when nothing is held).
    private func holdMassDeletions(in steps: inout [SyncStep], of knownItems: Int, earlier: Int, approved: Set<String>,
                                   _ isDeletion: (SyncStep) -> Bool) -> [String] {
        let deletions = steps.filter(isDeletion).map(\.path)
        guard !deletions.isEmpty, isMassDeletion(count: deletions.count + earlier, of: knownItems + earlier),
              !Set(deletions).isSubset(of: approved) else { return [] }
        let held = Set(deletions)
        steps.removeAll { isDeletion($0) && held.contains($0.path) }
        return deletions.sorted()
    }

    /// Whether `path` is one of `prefixes` or inside one (`""` contains everything).
    static func isUnder(_ path: String, _ prefixes: [String]) -> Bool {
        prefixes.contains { $0.isEmpty || path == $0 || path.hasPrefix($0 + "/") }
    }

    // MARK: Per item

    private func step(base: JournalEntry?, local: LocalItem?, remote: RemoteItem?, path: String) -> SyncStep? {
        if let local, let remote, local.isFolder != remote.isFolder { return .kindClash(path) }
        let isFolder = local?.isFolder ?? remote?.isFolder ?? base?.isFolder ?? false
        if isFolder { return folderStep(base: base, local: local, remote: remote, path: path) }
        guard let base, !base.isFolder else {
            switch (local, remote) {
            case (.some, .some): return .conflict(path)
            case (.some, nil): return .upload(path)
            case (nil, .some): return .download(path)
            case (nil, nil): return base == nil ? nil : .forget(path)
            }
        }
        let localChanged = local.map { $0.fingerprint != base.local } ?? true
        let remoteChanged = remote.map { !Self.isSame($0.tag, base.remoteTag) } ?? true
        switch (localChanged, remoteChanged) {
        case (false, false):
            // A tag read after our upload may be a third party's: the bytes are compared once
            // (identical: recorded as verified; different: the server's version is current and
            // ours a conflict version). Large files keep the tag (one download of them is dearer).
            if base.tagUnverified == true, let local, local.fingerprint.size <= guards.unverifiedTagCheckLimit {
                return .conflict(path)
            }
            return nil
        case (true, false): return local == nil ? .deleteRemote(path) : .upload(path)
        case (false, true): return remote == nil ? .deleteLocal(path) : .download(path)
        case (true, true):
            switch (local, remote) {
            case (nil, nil): return .forget(path)
            case (.some, nil): return .upload(path)
            case (nil, .some): return .download(path)
            case (.some, .some): return .conflict(path)
            }
        }
    }

    private func folderStep(base: JournalEntry?, local: LocalItem?, remote: RemoteItem?, path: String) -> SyncStep? {
        switch (local, remote) {
        case (.some, .some): return base?.isFolder == true ? nil : .recordFolder(path)
        case (.some, nil): return base == nil ? .makeRemoteFolder(path) : .deleteLocal(path)
        case (nil, .some): return base == nil ? .makeLocalFolder(path) : .deleteRemote(path)
        case (nil, nil): return base == nil ? nil : .forget(path)
        }
    }

    /// A new server: nothing is deleted; what is on one side only is copied to the other; files
    /// on both sides are conflicts unless the server's tag is still the journal's and the local
    /// file is unchanged.
    private func stepForNewServer(base: JournalEntry?, local: LocalItem?, remote: RemoteItem?, path: String) -> SyncStep? {
        if let local, let remote, local.isFolder != remote.isFolder { return .kindClash(path) }
        let isFolder = local?.isFolder ?? remote?.isFolder ?? false
        switch (local, remote) {
        case (.some, .some):
            if isFolder { return base?.isFolder == true ? nil : .recordFolder(path) }
            if let base, Self.isSame(remote?.tag, base.remoteTag), local?.fingerprint == base.local { return nil }
            return .conflict(path)
        case (.some, nil): return isFolder ? .makeRemoteFolder(path) : .upload(path)
        case (nil, .some): return isFolder ? .makeLocalFolder(path) : .download(path)
        case (nil, nil): return base == nil ? nil : .forget(path)
        }
    }

    // MARK: Moves

    /// Files renamed on one side and unchanged on the other, recognised so that a rename is a
    /// rename (no upload, no download, no deletion): here by the inode, size and modification
    /// time (a rename keeps them; the change time moves); on the server by the file id, with the
    /// same tag. Ambiguous matches (two candidates) are left to the ordinary rules.
    private func moves(_ input: SyncPlanInput, local: [String: LocalItem]) -> [SyncStep] {
        struct Key: Hashable { var inode: UInt64; var size: Int64; var modified: Int64 }
        var steps: [SyncStep] = []
        var newHere: [Key: [String]] = [:]
        var newThere: [String: [String]] = [:]
        for (path, item) in local where !item.isFolder && input.base[path] == nil && input.remote[path] == nil
            && !input.packages.contains(path) {
            let print = item.fingerprint
            newHere[Key(inode: print.inode, size: print.size, modified: print.modifiedNanoseconds), default: []].append(path)
        }
        for (path, item) in input.remote where !item.isFolder && input.base[path] == nil && local[path] == nil
            && !input.packages.contains(path) {
            if let fileID = item.fileID { newThere[fileID, default: []].append(path) }
        }
        for (path, entry) in input.base.sorted(by: { $0.key < $1.key }) where !entry.isFolder && !input.packages.contains(path) {
            guard let known = entry.local else { continue }
            if local[path] == nil, let remote = input.remote[path], Self.isSame(remote.tag, entry.remoteTag),
               let candidates = newHere[Key(inode: known.inode, size: known.size, modified: known.modifiedNanoseconds)],
               candidates.count == 1, let destination = candidates.first {
                steps.append(.moveRemote(from: path, to: destination))
                newHere[Key(inode: known.inode, size: known.size, modified: known.modifiedNanoseconds)] = nil
            } else if input.remote[path] == nil, local[path]?.fingerprint == known, let fileID = entry.fileID,
                      let candidates = newThere[fileID], candidates.count == 1, let destination = candidates.first,
                      let moved = input.remote[destination], Self.isSame(moved.tag, entry.remoteTag) {
                steps.append(.moveLocal(from: path, to: destination))
                newThere[fileID] = nil
            }
        }
        return steps
    }

    // MARK: Whole-plan rules

    /// A folder deletion is replaced by making the folder again when something below it is kept
    /// or arrives (an upload, a download, a conflict, a held deletion).
    private func keepFoldersOfKeptItems(_ steps: [SyncStep]) -> [SyncStep] {
        var keptBelow = Set<String>()
        for step in steps {
            switch step {
            case .deleteLocal, .deleteRemote, .forget, .kindClash: continue
            default: break
            }
            var components = step.path.split(separator: "/").dropLast()
            while !components.isEmpty {
                keptBelow.insert(components.joined(separator: "/"))
                components = components.dropLast()
            }
        }
        return steps.map { step in
            switch step {
            case .deleteLocal(let path) where keptBelow.contains(path): .makeRemoteFolder(path)
            case .deleteRemote(let path) where keptBelow.contains(path): .makeLocalFolder(path)
            default: step
            }
        }
    }

    func isMassDeletion(count: Int, of known: Int) -> Bool {
        if count > guards.heldDeletionMaximum { return true }
        return count >= guards.heldDeletionShareMinimum && Double(count) > guards.heldDeletionShare * Double(known)
    }

    func isReplacedServer(_ input: SyncPlanInput) -> Bool {
        if let known = input.knownRootFileID, let now = input.remoteRootFileID, known != now { return true }
        var present = 0, unseen = 0
        for entry in input.base.values where !entry.isFolder && entry.remoteTag != nil {
            guard let remote = input.remote[entry.path], !remote.isFolder else { continue }
            present += 1
            if !Self.isSame(remote.tag, entry.remoteTag) { unseen += 1 }
            // A tag the item had before, back again: the server was put back to an older copy.
            // (A content tag can also come back when someone restores identical older bytes;
            // treating that pass as a new server costs only that nothing is deleted in it.)
            if let value = remote.tag?.value, value != entry.remoteTag?.value,
               entry.previousTags?.contains(value) == true { return true }
        }
        return present >= guards.replacementMinimumItems && unseen * 2 > present
    }

    /// Whether two tags name the same bytes: both present with the same opaque value. A weak and
    /// a strong tag with one value are the same (Apache's tag is weak for a second after a write,
    /// then strong with the same value); a missing tag is never the same as anything.
    static func isSame(_ first: RemoteTag?, _ second: RemoteTag?) -> Bool {
        guard let first, let second else { return false }
        return first.value == second.value
    }

    /// Steps by phase; within a phase by path, deletions children first.
    static func ordered(_ steps: [SyncStep]) -> [SyncStep] {
        steps.sorted { left, right in
            if left.phase != right.phase { return left.phase < right.phase }
            let leftPath = left.path.split(separator: "/").map(String.init)
            let rightPath = right.path.split(separator: "/").map(String.init)
            if left.phase == 2 { return rightPath.lexicographicallyPrecedes(leftPath) }
            return leftPath.lexicographicallyPrecedes(rightPath)
        }
    }
}
