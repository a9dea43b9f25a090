import Foundation
import Glibc
import SystemSupport

// The change monitor's part in telling presenters of a *folder* what programs that do not
// coordinate (a sync tool, `cp`, an editor) did inside it — anywhere below it, in any process.
//
// **Watches.** Once a presented item is a folder (when its presenter is registered, or when the
// folder is made later), the folder itself and every folder below it are watched with the
// monitor's one `inotify` descriptor (one watch per folder; a watch sees the entries of its own
// folder only). Folders made or moved in later are watched as they appear — and what a new folder
// already holds when its watch starts is reported as new too (a `mkdir -p a/b && echo > a/b/f`
// races the watch). Folders deleted or moved out are forgotten. Symbolic links are not followed.
// A package (a registered extension) is not watched as a root: its presenter is a document, told
// of changes of the whole item as before; inside a presented folder, a package's folders are
// watched like any other.
//
// **Bounds.** At most `subtreeFolderLimit` folders are watched for all presented folders of a
// runtime, breadth first from each presented folder (the shallow levels first); the kernel's own
// limit (`fs.inotify.max_user_watches`, per user) may end it sooner. Beyond that, the folders left
// unwatched are invisible: nothing inside them is reported. The presenters of a presented folder
// whose subtree could not be watched in full are told once, with `presentedItemDidChange()`
// ("something in here may have changed; look"), and a line goes to standard error. The names of
// each watched folder's entries are remembered (to tell a new item from a replaced one) up to
// `subtreeNameLimit` names in all; a folder beyond it is watched without names, and a name renamed
// into it is then reported as new.
//
// **What presenters of the folders above an entry hear** (every presented folder above it, in
// this runtime; presenters of a package or of something inside a package are not folder
// presenters and hear nothing of this):
// - an item made, or moved in: `presentedSubitemDidAppear(at:)` — for a file made in place, once
//   its maker has closed it (or its folder has been quiet for `deletionGraceInterval`, at most
//   `deletionWaitLimit`, for one kept open), so a presenter does not read it half written and a
//   file made and written is one appearance;
// - an item written, or its attributes changed: `presentedSubitemDidChange(at:)`;
// - an item replaced — deleted, then a temporary file renamed to its name, as Syncthing delivers
//   an update, or a temporary renamed over it: `presentedSubitemDidChange(at:)`, once. As for
//   presented items, a missing entry is reported only once its folder has been quiet for
//   `deletionGraceInterval` (at most `deletionWaitLimit`), so a replacement is one change;
// - an item deleted (or moved out): `presentedSubitemDidChange(at:)` with its old URL, once it
//   stayed missing — what Apple's system sends folder presenters for a deletion it notices
//   afterwards (`accommodatePresentedSubitemDeletion(at:completionHandler:)` asks *before* a
//   coordinated deletion, which is no longer possible). A folder deleted with everything in it is
//   reported as the folder's deletion (its entries only if they went missing before it);
// - a rename inside the folder: the old name's deletion and the new name's appearance.
// Sync tools' temporary and internal files, conflict copies (versions, see
// ChangeMonitor+ConflictCopies.swift) and this package's save temporaries (`.NAME.cdsave-…`,
// `.NAME.cdold-…`) are never reported.
//
// **Coordinated changes are reported once.** A coordinator of this runtime tells the folder's
// presenters itself: the kernel's reports are ignored while it writes, and the stamp it left is
// recorded when it is done (`noteCoordinatedSubitemWrite`), so reports of that write read later
// are recognised. A coordinator of another process tells them through its message
// (`subitemDidChange`/`…Appear`/`…Move`, `accommodateSubitemDeletion`): whichever of that message
// and the kernel's report comes first wins, by the subitem's stamp (`claimAnnouncedSubitem`,
// `noteAnnouncedSubitem`), as for presented items (ChangeMonitor+RemoteAnnouncements.swift).
//
// **A full kernel queue** (`IN_Q_OVERFLOW`: reports were lost) is told to the presenters of every
// presented folder with `presentedItemDidChange()`, and the remembered names are dropped.

extension ChangeMonitor {
    /// The most folders watched inside presented folders, per runtime (each costs one of the
    /// user's `inotify` watches and about 1 KiB of kernel memory).
    static let subtreeFolderLimit = 4096

    /// The most entry names remembered for all watched subtree folders together.
    static let subtreeNameLimit = 262_144

    /// The most entries kept in each of the bounded maps (`subitemAnnounced`, `subitemReported`,
    /// `returnedSubitems`: past it, a map is emptied — at worst one change is reported twice) and
    /// waiting in settling lists (past it, entries are reported at once).
    static let subitemMemoryLimit = 4096

    /// A folder watched as part of a presented folder's subtree.
    struct TreeFolder {
        var descriptor: Int32
        /// The names of its entries, as of the reports read so far; nil when not remembered.
        var names: Set<String>?
        /// Counts the kernel's reports about this folder (to tell when it has settled).
        var generation: UInt64 = 0
    }

    /// One report of the kernel about an entry of a subtree folder.
    struct TreeReport {
        let folder: String
        let name: String
        let mask: UInt32
        var path: String { CanonicalPath.join(folder, name) }
    }

    /// What one read's reports did to one entry.
    private struct TreeEntry {
        let path: String
        let folder: String
        let name: String
        /// Whether the entry was there before this read's first report of it (nil: names not
        /// remembered for its folder).
        let existedBefore: Bool?
        /// Whether a report said it was made or moved in.
        var created = false
        /// Every kind of report read about it.
        var mask: UInt32 = 0
    }

    private enum SubitemChange { case appeared, changed, maybeDeleted, waitingForClose }

    // MARK: Starting and stopping

    /// Starts watching inside the presented item at `path` if it is a folder (not a package, not
    /// the lock directory) whose subtree is not watched yet. `fromRegistry`: called with the
    /// registry's lock held (registration), so nothing may be sent to presenters.
    func watchTreeIfFolder(_ path: String, fromRegistry: Bool) {
        var info = stat()
        guard CanonicalPath.withCString(path, { lstat($0, &info) }) == 0, info.st_mode & S_IFMT == S_IFDIR else { return }
        let runtime = target.withLock { $0.runtime }
        if runtime?.packageExtensions.isPackage(path) == true { return }
        let start = state.withLock { state -> Bool in
            guard state.stamps[path] != nil, state.loop != nil else { return false }  // no longer presented
            state.treeRoots.insert(path)
            return state.treeFolders[path] == nil
        }
        guard start else { return }
        addTree(path, listingNew: false, fromRegistry: fromRegistry)
    }

    /// Stops watching inside `root` (its last presenter went), keeping the folders another
    /// presented folder's subtree still needs. Call with the lock held.
    static func unwatchTree(_ root: String, in state: inout State) {
        guard state.treeRoots.remove(root) != nil else { return }
        state.truncatedRoots.remove(root)
        let roots = state.treeRoots
        let gone = state.treeFolders.keys.filter { folder in
            (folder == root || CanonicalPath.isInside(folder, root))
                && !roots.contains { folder == $0 || CanonicalPath.isInside(folder, $0) }
        }
        for folder in gone { forgetFolder(folder, in: &state) }
    }

    /// Stops watching the subtree folders at and inside `path` (deleted or moved away). Call with
    /// the lock held.
    static func forgetTree(_ path: String, in state: inout State) {
        let gone = state.treeFolders.keys.filter { $0 == path || CanonicalPath.isInside($0, path) }
        for folder in gone { forgetFolder(folder, in: &state) }
    }

    /// Forgets one subtree folder and gives its watch back (the descriptor may still serve the
    /// folder of presented items, which keeps it). Call with the lock held.
    private static func forgetFolder(_ folder: String, in state: inout State) {
        guard let entry = state.treeFolders.removeValue(forKey: folder) else { return }
        state.trackedNameCount -= entry.names?.count ?? 0
        if state.treeFolderByDescriptor[entry.descriptor] == folder {
            state.treeFolderByDescriptor.removeValue(forKey: entry.descriptor)
        }
        let users = (state.descriptorUsers[entry.descriptor] ?? 1) - 1
        if users > 0 {
            state.descriptorUsers[entry.descriptor] = users
        } else {
            state.loop?.removeWatch(entry.descriptor)
            state.descriptorUsers.removeValue(forKey: entry.descriptor)
            state.directoryByDescriptor.removeValue(forKey: entry.descriptor)
        }
    }

    /// The kernel dropped these watches (their folders were deleted): forget the subtree
    /// folders they served.
    func forgetDroppedWatches(_ descriptors: [Int32]) {
        state.withLock { state in
            for descriptor in descriptors {
                guard let folder = state.treeFolderByDescriptor.removeValue(forKey: descriptor),
                      let entry = state.treeFolders[folder], entry.descriptor == descriptor else { continue }
                state.treeFolders.removeValue(forKey: folder)
                state.trackedNameCount -= entry.names?.count ?? 0
                let users = (state.descriptorUsers[descriptor] ?? 1) - 1
                if users > 0 { state.descriptorUsers[descriptor] = users } else { state.descriptorUsers.removeValue(forKey: descriptor) }
            }
        }
    }

    /// Watches `folder` and every folder inside it, breadth first, within the bounds. With
    /// `listingNew`, the entries found in the folders (made after `folder` appeared, before their
    /// watches started) are returned, to be reported as new. A folder that cannot be watched for
    /// want of watches ends the descent there and is reported (see the file's comment).
    @discardableResult
    func addTree(_ folder: String, listingNew: Bool, fromRegistry: Bool = false) -> [(path: String, isFolder: Bool)] {
        let lockDirectory = try? target.withLock({ $0.runtime })?.lockDirectory().path
        var queue = [folder]
        var next = 0
        var found: [(path: String, isFolder: Bool)] = []
        var unwatched: String?
        while next < queue.count {
            let current = queue[next]
            next += 1
            if let lockDirectory, current == lockDirectory || CanonicalPath.isInside(current, lockDirectory) { continue }
            enum Outcome { case watched, known, gone, full }
            let outcome: Outcome = state.withLock { state in
                guard let loop = state.loop, state.treeFolders[current] == nil else { return .known }
                guard state.treeFolders.count < Self.subtreeFolderLimit else { return .full }
                let descriptor: Int32
                switch loop.addWatch(current, mask: Self.watchedEvents) {
                case .success(let added): descriptor = added
                case .failure(let error): return error.rawValue == ENOSPC ? .full : .gone  // the kernel's watch limit, or gone
                }
                state.treeFolders[current] = TreeFolder(descriptor: descriptor)
                state.treeFolderByDescriptor[descriptor] = current
                state.descriptorUsers[descriptor, default: 0] += 1
                return .watched
            }
            switch outcome {
            case .known, .gone: continue
            case .full:
                if unwatched == nil { unwatched = current }
                continue
            case .watched: break
            }
            // Listed after the watch started: what appears from now on is reported by the kernel.
            guard let entries = Self.listFolder(current) else { continue }
            state.withLock { state in
                guard state.treeFolders[current] != nil else { return }
                // Save temporaries' files are not remembered: their reports are set aside unread
                // (ChangeMonitor+Reading.swift), so their names would never be forgotten.
                let names = Set(entries.lazy.filter { $0.isFolder || !Self.isSaveTemporary($0.name) }.map(\.name))
                if state.trackedNameCount + names.count <= Self.subtreeNameLimit {
                    state.treeFolders[current]?.names = names
                    state.trackedNameCount += names.count
                }
            }
            for entry in entries {
                let path = CanonicalPath.join(current, entry.name)
                if entry.isFolder { queue.append(path) }
                if listingNew && !Self.isHiddenFromFolderPresenters(entry.name) { found.append((path, entry.isFolder)) }
            }
        }
        if let unwatched { reportUnwatched(unwatched, fromRegistry: fromRegistry) }
        return found
    }

    /// The events every watch of the monitor asks for (one mask: a folder watched both as the
    /// folder of presented items and as a subtree folder has one watch).
    static let watchedEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)

    /// The entries of the folder at `path` (names as lossless strings), and which are folders
    /// (not following links); nil when it cannot be read.
    static func listFolder(_ path: String) -> [(name: String, isFolder: Bool)]? {
        guard let folder = CanonicalPath.withCString(path, { opendir($0) }) else { return nil }
        defer { closedir(folder) }
        var entries: [(name: String, isFolder: Bool)] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                PathBytes.string(fromBytes: raw.prefix(while: { $0 != 0 }))
            }
            if name == "." || name == ".." { continue }
            var isFolder = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                isFolder = CanonicalPath.withCString(CanonicalPath.join(path, name)) { lstat($0, &info) } == 0
                    && info.st_mode & S_IFMT == S_IFDIR
            }
            entries.append((name, isFolder))
        }
        return entries
    }

    /// Tells the presented folders above `folder` (which could not be watched) once that their
    /// subtree is not watched in full — unless called from the registry (registration), where
    /// only the line on standard error is written.
    private func reportUnwatched(_ folder: String, fromRegistry: Bool) {
        let roots: [String] = state.withLock { state in
            let roots = state.treeRoots.filter { folder == $0 || CanonicalPath.isInside(folder, $0) }
                .filter { !state.truncatedRoots.contains($0) }
            state.truncatedRoots.formUnion(roots)
            return Array(roots)
        }
        guard !roots.isEmpty else { return }
        let line = Array("FileCoordination: change monitor: not watching “\(folder)” and what is beside or below it: more than \(Self.subtreeFolderLimit) folders (or the kernel's inotify limit) in presented folders; changes there are not reported\n".utf8)
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
        guard fromRegistry else {
            for root in roots { sendToPresenters(of: root, .itemDidChange) }
            return
        }
        // The registry's lock is held (a presenter is being registered): told once the
        // registration is complete (`sendOwedMessages`, called by the registry).
        state.withLock { $0.owedRoots.formUnion(roots) }
    }

    /// Sends what registration owed: `presentedItemDidChange()` to the presenters of the folders
    /// not watched in full. Called by the registry once it has released its lock.
    func sendOwedMessages() {
        let roots: Set<String> = state.withLock { state in
            guard !state.owedRoots.isEmpty else { return [] }
            defer { state.owedRoots.removeAll() }
            return state.owedRoots
        }
        for root in roots { sendToPresenters(of: root, .itemDidChange) }
    }

    /// The kernel's queue overflowed: reports were lost. Every presented folder's presenters are
    /// told their folder changed; the remembered names can no longer be trusted.
    func handleOverflow() {
        let roots: [String] = state.withLock { state in
            for folder in state.treeFolders.keys { state.treeFolders[folder]?.names = nil }
            state.trackedNameCount = 0
            return Array(state.treeRoots)
        }
        for root in roots { sendToPresenters(of: root, .itemDidChange) }
    }

    // MARK: The kernel's reports

    /// Passes on one read's reports about entries of subtree folders (see the file's comment).
    /// Presented items moved (`moved`) are left to their presenters' move messages.
    func handleSubtree(_ reports: [TreeReport], skipping moved: FollowedMoves) {
        guard !reports.isEmpty else { return }
        var entries: [TreeEntry] = []
        var index: [String: Int] = [:]
        var newFolders: [(path: String, made: Bool)] = []
        let madeOrMovedIn = UInt32(IN_CREATE | IN_MOVED_TO), removed = UInt32(IN_DELETE | IN_MOVED_FROM)
        // Book-keeping first, in the order of the reports: names, and folders to watch or forget.
        state.withLock { state in
            for report in reports {
                let path = report.path
                let folder = state.treeFolders[report.folder]
                if index[path] == nil {
                    index[path] = entries.count
                    entries.append(TreeEntry(path: path, folder: report.folder, name: report.name,
                                             existedBefore: folder?.names.map { $0.contains(report.name) }))
                }
                if let position = index[path] {
                    entries[position].mask |= report.mask
                    if report.mask & madeOrMovedIn != 0 { entries[position].created = true }
                }
                if folder?.names != nil {
                    if report.mask & madeOrMovedIn != 0 {
                        if state.treeFolders[report.folder]?.names?.insert(report.name).inserted == true {
                            state.trackedNameCount += 1
                            if state.trackedNameCount > Self.subtreeNameLimit {
                                // Over the bound: this folder's names are no longer remembered.
                                state.trackedNameCount -= state.treeFolders[report.folder]?.names?.count ?? 0
                                state.treeFolders[report.folder]?.names = nil
                            }
                        }
                    } else if report.mask & removed != 0,
                              state.treeFolders[report.folder]?.names?.remove(report.name) != nil {
                        state.trackedNameCount -= 1
                    }
                }
                if report.mask & UInt32(IN_ISDIR) != 0 {
                    if report.mask & removed != 0 { Self.forgetTree(path, in: &state) }
                    if report.mask & madeOrMovedIn != 0 { newFolders.append((path, report.mask & UInt32(IN_CREATE) != 0)) }
                }
            }
        }
        // New folders are watched; what a folder just made already holds is new too.
        var found: [(path: String, isFolder: Bool)] = []
        for folder in newFolders { found += addTree(folder.path, listingNew: folder.made) }
        for entry in entries where !moved.sources.contains(entry.path) && !moved.destinations.contains(entry.path)
            && !Self.isHiddenFromFolderPresenters(entry.name) {
            // A file made in place (not a folder, not renamed in) is announced once closed.
            let madeInPlace = entry.mask & UInt32(IN_CREATE) != 0 && entry.mask & UInt32(IN_ISDIR) == 0
            deliverSubitem(entry.path, folder: entry.folder, existedBefore: entry.existedBefore, created: entry.created,
                           open: madeInPlace && entry.mask & UInt32(IN_CLOSE_WRITE) == 0,
                           closed: entry.mask & UInt32(IN_CLOSE_WRITE) != 0)
        }
        for item in found where index[item.path] == nil {
            // Found in a folder just made: made in place, perhaps still being written.
            deliverSubitem(item.path, folder: CanonicalPath.split(item.path).parent, existedBefore: false, created: true,
                           open: !item.isFolder, closed: false)
        }
    }

    /// Tells the presenters of the folders above `path` what happened to it, if it is news:
    /// not a write of a coordinator of this runtime (in progress, or whose stamp is recorded),
    /// not announced by another process's coordinator, not reported already. A missing entry is
    /// reported once it stayed missing, and a file made in place and still `open` once it is
    /// closed (`closed`, a later report) or has settled: both wait in their folder's settling
    /// list (``settle(_:in:kind:)``).
    private func deliverSubitem(_ path: String, folder: String, existedBefore: Bool?, created: Bool,
                                open: Bool, closed: Bool) {
        let change: SubitemChange? = state.withLock { state in
            guard !Self.isBeingWritten(path, in: state) else { return nil }
            // Looked at with the lock held: a coordinator of this runtime writes and records its
            // stamp under this lock, so the decision never uses a stamp older than its record.
            let stamp = Self.subitemStamp(of: path)
            let pending = state.settling[folder]?.deletions[path] != nil || state.returnedSubitems.contains(path)
            let appearing = state.settling[folder]?.appearances[path] != nil
            if stamp == .missing {
                if appearing {
                    Self.unsettle(path, in: folder, &state)  // made and gone before it was announced
                    return nil
                }
                // Made and gone within one read (a temporary file): nothing happened.
                guard pending || existedBefore != false else { return nil }
                return Self.isAnnouncedSubitem(path, stamp: stamp, in: state) ? nil : .maybeDeleted
            }
            // Announced when closed (or settled), as new.
            if appearing && !closed { return nil }
            Self.unsettle(path, in: folder, &state)
            if Self.isAnnouncedSubitem(path, stamp: stamp, in: state) || state.subitemReported[path] == stamp {
                return nil
            }
            var appeared: Bool
            if appearing {
                appeared = true
            } else if pending {
                appeared = false  // deleted, then back: replaced
            } else if let existedBefore {
                appeared = !existedBefore
            } else {
                appeared = created
            }
            // Its appearance was announced already, by another process's message at an earlier
            // stamp: what the kernel's report shows now is a later change of it (reported as
            // such, so that process's own message of that change is not the one dropped as a
            // repeat — under load the report of a creation can be read after the next write).
            if appeared, let announced = state.subitemAnnounced[path], announced != .missing, announced != stamp {
                appeared = false
            }
            if appeared && open { return .waitingForClose }
            Self.noteSubitemReported(path, stamp: stamp, in: &state)
            return appeared ? .appeared : .changed
        }
        switch change {
        case nil: return
        case .maybeDeleted: settle(path, in: folder, kind: .deletion)
        case .waitingForClose: settle(path, in: folder, kind: .appearance)
        case .appeared: sendToFolderPresenters(above: path, .subitemDidAppear(at: CanonicalPath.url(for: path)))
        case .changed: sendToFolderPresenters(above: path, .subitemDidChange(at: CanonicalPath.url(for: path)))
        }
    }

    /// Entries of one folder waiting to be reported once the folder has settled, with when each
    /// started waiting. One timer per folder with entries (`State.settling`), however many.
    struct SettlingFolder {
        /// Entries found missing: deleted, unless they are back by then (a replacement).
        var deletions: [String: DispatchTime] = [:]
        /// Files made in place and not closed yet: announced once closed, or once settled.
        var appearances: [String: DispatchTime] = [:]
        var isEmpty: Bool { deletions.isEmpty && appearances.isEmpty }
        var count: Int { deletions.count + appearances.count }
    }

    enum SettlingKind { case deletion, appearance }

    /// Puts `path` in `folder`'s settling list, starting the folder's timer if none runs. Past
    /// ``subitemMemoryLimit`` entries in all, the entry is reported at once instead (a
    /// replacement may then be reported as a deletion and an appearance). An entry of a folder no
    /// longer watched is dropped: the folder's own deletion is reported.
    private func settle(_ path: String, in folder: String, kind: SettlingKind) {
        enum Outcome { case start(UInt64), joined, full, unwatched }
        let outcome: Outcome = state.withLock { state in
            guard let generation = state.treeFolders[folder]?.generation else { return .unwatched }
            guard state.settlingCount < Self.subitemMemoryLimit else { return .full }
            let starts = state.settling[folder] == nil
            var entry = state.settling[folder] ?? SettlingFolder()
            let before = entry.count
            switch kind {
            case .deletion: entry.deletions[path] = entry.deletions[path] ?? .now()
            case .appearance: entry.appearances[path] = entry.appearances[path] ?? .now()
            }
            state.settlingCount += entry.count - before
            state.settling[folder] = entry
            return starts ? .start(generation) : .joined
        }
        switch outcome {
        case .joined, .unwatched: return
        case .start(let generation): whenSettled(folder, seen: generation, deadline: .now() + Self.deletionWaitLimit)
        case .full:
            let report = state.withLock { state -> Bool in
                let stamp = Self.subitemStamp(of: path)
                guard (kind == .deletion) == (stamp == .missing), state.subitemReported[path] != stamp else { return false }
                Self.noteSubitemReported(path, stamp: stamp, in: &state)
                return true
            }
            guard report else { return }
            let url = CanonicalPath.url(for: path)
            sendToFolderPresenters(above: path, kind == .deletion ? .subitemDidChange(at: url) : .subitemDidAppear(at: url))
        }
    }

    /// Removes `path` from its folder's settling list (call with the lock held).
    private static func unsettle(_ path: String, in folder: String, _ state: inout State) {
        state.returnedSubitems.remove(path)
        guard var entry = state.settling[folder] else { return }
        let before = entry.count
        entry.deletions.removeValue(forKey: path)
        entry.appearances.removeValue(forKey: path)
        state.settlingCount -= before - entry.count
        state.settling[folder] = entry  // an empty list is removed by its timer
    }

    /// Once `folder` has had no report of the kernel for ``deletionGraceInterval`` — or, for the
    /// entries that have waited that long, once `deadline` (``deletionWaitLimit``) has passed,
    /// however busy the folder is — decides its settling entries: a deletion still missing is
    /// reported (`presentedSubitemDidChange(at:)`), one that is back is left to the report of
    /// its return (a change); a file still waiting is announced (`presentedSubitemDidAppear(at:)`).
    /// Entries added meanwhile wait for the next round. A folder no longer watched drops its
    /// entries.
    private func whenSettled(_ folder: String, seen: UInt64, deadline: DispatchTime) {
        Self.deletionChecks.asyncAfter(deadline: .now() + Self.deletionGraceInterval) { [self] in
            enum Step { case again(UInt64), decide(SettlingFolder) }
            let step: Step? = state.withLock { state in
                guard let generation = state.treeFolders[folder]?.generation else {
                    state.settlingCount -= state.settling.removeValue(forKey: folder)?.count ?? 0
                    return nil
                }
                let now = DispatchTime.now()
                if generation != seen && now < deadline { return .again(generation) }
                guard var entry = state.settling[folder] else { return nil }
                // Quiet: every entry is due. Busy past the deadline: those that waited long enough.
                let quiet = generation == seen
                let grace = DispatchTimeInterval.milliseconds(Int(Self.deletionGraceInterval * 1000))
                let isDue = { (since: DispatchTime) in quiet || since + grace <= now }
                let due = SettlingFolder(deletions: entry.deletions.filter { isDue($0.value) },
                                         appearances: entry.appearances.filter { isDue($0.value) })
                for path in due.deletions.keys { entry.deletions.removeValue(forKey: path) }
                for path in due.appearances.keys { entry.appearances.removeValue(forKey: path) }
                state.settlingCount -= due.count
                state.settling[folder] = entry
                return .decide(due)
            }
            switch step {
            case .again(let generation):
                whenSettled(folder, seen: generation, deadline: deadline)
                return
            case .decide(let due):
                decideSettled(due)
            case nil:
                break
            }
            // Another round for what is left (entries added meanwhile), or done.
            let next: UInt64? = state.withLock { state in
                guard let entry = state.settling[folder] else { return nil }
                guard !entry.isEmpty, let generation = state.treeFolders[folder]?.generation else {
                    state.settlingCount -= entry.count
                    state.settling.removeValue(forKey: folder)  // only now: every message of it is sent
                    return nil
                }
                return generation
            }
            if let next { whenSettled(folder, seen: next, deadline: .now() + Self.deletionWaitLimit) }
        }
    }

    /// Reports the settled entries that still need it (see ``whenSettled(_:seen:deadline:)``).
    private func decideSettled(_ due: SettlingFolder) {
        for path in due.deletions.keys.sorted() {
            let deleted = state.withLock { state -> Bool in
                let stamp = Self.subitemStamp(of: path)  // with the lock held, as in `deliverSubitem`
                guard stamp == .missing else {
                    // Back, and its report not read yet: that report is a change (replaced).
                    if state.returnedSubitems.count >= Self.subitemMemoryLimit { state.returnedSubitems.removeAll() }
                    state.returnedSubitems.insert(path)
                    return false
                }
                guard !Self.isBeingWritten(path, in: state), !Self.isAnnouncedSubitem(path, stamp: .missing, in: state),
                      state.subitemReported[path] != .missing else { return false }
                Self.noteSubitemReported(path, stamp: .missing, in: &state)
                return true
            }
            if deleted { sendToFolderPresenters(above: path, .subitemDidChange(at: CanonicalPath.url(for: path))) }
        }
        for path in due.appearances.keys.sorted() {
            let appeared = state.withLock { state -> Bool in
                let stamp = Self.subitemStamp(of: path)
                guard stamp != .missing, !Self.isBeingWritten(path, in: state),
                      !Self.isAnnouncedSubitem(path, stamp: stamp, in: state), state.subitemReported[path] != stamp else { return false }
                Self.noteSubitemReported(path, stamp: stamp, in: &state)
                return true
            }
            if appeared { sendToFolderPresenters(above: path, .subitemDidAppear(at: CanonicalPath.url(for: path))) }
        }
    }

    // MARK: Coordinated changes (reported once)

    /// True when the parent of `path` is a watched subtree folder. Call with the lock held.
    static func isInWatchedTree(_ path: String, in state: State) -> Bool {
        guard !state.treeFolders.isEmpty else { return false }
        return state.treeFolders[CanonicalPath.split(path).parent] != nil
    }

    /// A coordinator of this runtime finished writing `path` (inside a presented folder), which
    /// it now is as `stamp`: it tells the folder's presenters itself. Call with the lock held.
    static func noteCoordinatedSubitemWrite(_ path: String, stamp: FileIdentity, in state: inout State) {
        state.subitemReported.removeValue(forKey: path)  // its own message must go through
        noteSubitemAnnounced(path, stamp: stamp, in: &state)
    }

    /// A message about the subitem `path` (`presentedSubitemDidChange`/`…DidAppear`) is about to
    /// be delivered to a folder presenter of this runtime — from this runtime's coordinator or
    /// another process's. Returns false when the monitor already reported this very change (the
    /// entry's stamp is the one it reported): the message is then dropped. Otherwise records the
    /// stamp, so the kernel's report of the change, read later, is not passed on.
    func claimAnnouncedSubitem(_ path: String) -> Bool {
        state.withLock { state in
            guard Self.isInWatchedTree(path, in: state) else { return true }
            let stamp = Self.subitemStamp(of: path)  // with the lock held, as in `deliverSubitem`
            if state.subitemReported[path] == stamp { return false }
            Self.noteSubitemAnnounced(path, stamp: stamp, in: &state)
            return true
        }
    }

    /// A coordinator is about to delete the subitem `path` (`deleted`), or has moved or changed
    /// it: the kernel's report of that is not passed on.
    func noteAnnouncedSubitem(_ path: String, deleted: Bool) {
        state.withLock { state in
            guard Self.isInWatchedTree(path, in: state) else { return }
            Self.noteSubitemAnnounced(path, stamp: deleted ? .missing : Self.subitemStamp(of: path), in: &state)
        }
    }

    private static func noteSubitemAnnounced(_ path: String, stamp: FileIdentity, in state: inout State) {
        if state.subitemAnnounced.count >= subitemMemoryLimit { state.subitemAnnounced.removeAll() }
        state.subitemAnnounced[path] = stamp
    }

    private static func noteSubitemReported(_ path: String, stamp: FileIdentity, in state: inout State) {
        if state.subitemReported.count >= subitemMemoryLimit { state.subitemReported.removeAll() }
        state.subitemReported[path] = stamp
    }

    /// Whether a coordinator announced `path` as it is now (`stamp`); for a missing entry, also
    /// whether it announced the deletion (or move) of a folder around it that is gone. Call with
    /// the lock held.
    private static func isAnnouncedSubitem(_ path: String, stamp: FileIdentity, in state: State) -> Bool {
        guard !state.subitemAnnounced.isEmpty else { return false }
        if state.subitemAnnounced[path] == stamp { return true }
        guard stamp == .missing else { return false }
        var current = path
        while current != "/" {
            current = CanonicalPath.split(current).parent
            if state.subitemAnnounced[current] == .missing && Self.stamp(of: current) == .missing { return true }
        }
        return false
    }

    /// The stamp of the subitem at `path` (not following a final link), as the subtree code
    /// compares it: a file's identity, or `FileIdentity.missing`; for a folder only its device
    /// and inode — its times and size change whenever an entry inside it does, which is reported
    /// as that entry's change, not the folder's. A file whose last link is being removed (link
    /// count 0: `unlink` reports the link count's change before the name is gone, and a process
    /// preempted between the two leaves it so for a while) is missing: a deletion, not a change.
    static func subitemStamp(of path: String) -> FileIdentity {
        var info = stat()
        guard CanonicalPath.withCString(path, { lstat($0, &info) }) == 0 else { return .missing }
        guard info.st_mode & S_IFMT == S_IFDIR else { return info.st_nlink == 0 ? .missing : FileIdentity(info) }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: 0, modified: 0, changed: 0)
    }

    // MARK: Names and messages

    /// True for names folder presenters are never told about: this package's own save
    /// temporaries, and what the registered `SyncToolPolicy` says are sync tools' temporary and
    /// internal files or conflict copies (versions).
    static func isHiddenFromFolderPresenters(_ name: String) -> Bool {
        isSaveTemporary(name) || CoordinationRuntime.syncToolPolicy.isHiddenFromPresenters(name)
    }

    /// Sends `message` to the presenters of the folders above `path` in this runtime, except
    /// presenters of packages and of items inside packages (a package is one item: its presenter
    /// is not a folder presenter). Asynchronous, on their queues.
    func sendToFolderPresenters(above path: String, _ message: PresenterMessage) {
        let (registry, delivery, runtime) = target.withLock { ($0.registry, $0.delivery, $0.runtime) }
        guard let registry, let delivery else { return }
        for address in registry.addressesOfAncestors(of: path) {
            if let packages = runtime?.packageExtensions, packages.outermostPackage(containing: address.path) != nil { continue }
            delivery.sendUnclaimed(PresenterRequest(presenter: address.id, presentedPath: address.path, message: message, borrow: nil))
        }
    }

    /// Sends `message` to the presenters of `path` itself. Asynchronous, on their queues.
    func sendToPresenters(of path: String, _ message: PresenterMessage) {
        let (registry, delivery) = target.withLock { ($0.registry, $0.delivery) }
        guard let registry, let delivery else { return }
        for address in registry.addresses(at: path) {
            delivery.sendUnclaimed(PresenterRequest(presenter: address.id, presentedPath: address.path, message: message, borrow: nil))
        }
    }
}
