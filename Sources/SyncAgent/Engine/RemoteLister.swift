/// What one listing of the server found.
struct RemoteListing: Sendable {
    /// The synced items by container-relative path.
    var items: [String: RemoteItem] = [:]
    /// The files of the conflict area, by their full remote path (`.clouddocs-conflicts/…`).
    var conflictFiles: [String: RemoteItem] = [:]
    /// The root folder itself.
    var root: RemoteItem?
    /// Each listed folder's answer, kept for the next listing: a folder whose answer is the same
    /// again (``RemoteStore/listWithFolder(_:unlessUnchangedSince:)``) is not read again.
    var folders: [RemotePath: RemoteLister.FolderAnswer] = [:]
    /// Whether this is the previous listing again: every folder answered as before, so nothing on
    /// the server changed since (the same items, the same tags).
    var isUnchanged = false
    /// The last plan made while this was the server's listing, with what it was made from.
    private var lastPlan: (planner: SyncPlanner, input: SyncPlanInput, plan: SyncPlan)?

    /// `planner`'s plan for `input`: the last one made with this listing when the planner and its
    /// input are the same (the planner is a pure function of them), else a new one, kept for the
    /// next pass. An idle poll — the same listing (``RemoteLister`` returns the previous one
    /// unchanged), the same scan, the same journal — then plans nothing again: the comparison of
    /// dictionaries that were not modified since is a check of their storage, not of their items.
    mutating func plan(_ input: SyncPlanInput, with planner: SyncPlanner) -> SyncPlan {
        if let lastPlan, Self.same(lastPlan.planner, planner), Self.same(lastPlan.input, input) {
            // Kept with this input: the next pass's comparison is then one of shared storage,
            // not item by item against an equal copy made earlier (a rescan that found nothing new).
            self.lastPlan = (planner, input, lastPlan.plan)
            return lastPlan.plan
        }
        let plan = planner.plan(input)
        lastPlan = (planner, input, plan)
        return plan
    }

    /// Whether `a` and `b` hold equal values in every stored property, compared through `Mirror`
    /// so that a property added to the type is compared too; one that is not `Hashable` makes
    /// them different (no plan is ever reused on a comparison that could not be made).
    private static func same<Value>(_ a: Value, _ b: Value) -> Bool {
        let first = Mirror(reflecting: a).children, second = Mirror(reflecting: b).children
        guard first.count == second.count else { return false }
        for (x, y) in zip(first, second) {
            guard x.label == y.label, equal(x.value, y.value) else { return false }
        }
        return true
    }

    /// Whether two property values are equal. The big collections are compared as what they are
    /// (`==` of two dictionaries sharing their storage answers at once; `AnyHashable` would first
    /// convert every element); anything else through `AnyHashable`.
    private static func equal(_ x: Any, _ y: Any) -> Bool {
        let kind = type(of: x)
        guard kind == type(of: y) else { return false }
        // Each cast is tried only on a value of that very type (a cast between dictionary types
        // would convert element by element).
        if kind == [String: JournalEntry].self { return compare(x, y, as: [String: JournalEntry].self) }
        if kind == [String: LocalItem]?.self { return compare(x, y, as: [String: LocalItem]?.self) }
        if kind == [String: RemoteItem].self { return compare(x, y, as: [String: RemoteItem].self) }
        if kind == Set<String>.self { return compare(x, y, as: Set<String>.self) }
        if kind == [String].self { return compare(x, y, as: [String].self) }
        guard let a = x as? AnyHashable, let b = y as? AnyHashable else { return false }
        return a == b
    }

    private static func compare<Value: Equatable>(_ x: Any, _ y: Any, as _: Value.Type) -> Bool {
        guard let a = x as? Value, let b = y as? Value else { return false }
        return a == b
    }
}

/// Lists the whole tree of a ``RemoteStore`` with one `Depth: 1` listing per folder.
///
/// Given the previous listing, each folder's request carries the token of its previous answer;
/// a folder whose answer is the same is taken from the previous listing without being read, and
/// when every folder is the same the previous listing is returned as it was
/// (``RemoteListing/isUnchanged``): an idle poll costs the requests and no work per item.
enum RemoteLister {
    /// The largest tree listed (more is a typed error, not unbounded memory).
    /// Every item counts (files, folders, the conflict area's folders, excluded names).
    static let maximumItems = 1_000_000
    /// The deepest path listed, in components (deeper is a typed error, not an endless descent).
    static let maximumDepth = 256

    /// The bounds of one listing.
    struct Limits: Sendable {
        var items = RemoteLister.maximumItems
        var depth = RemoteLister.maximumDepth
    }

    /// One folder's answer: its own entry (when the store gave it), its direct children, and the
    /// token that tells the next answer is the same.
    struct FolderAnswer: Sendable {
        var token: RemoteListingToken?
        var folder: RemoteItem?
        var children: [RemoteItem]
    }

    /// Lists the tree; throws ``RemoteStoreError/malformedResponse(_:)`` past `limits` (more items,
    /// folders included, or deeper paths), and whatever the store's listings throw. `previous`
    /// is the last listing of the same store (its folders' answers are compared, not re-read).
    ///
    /// The folders are asked for level by level through ``RemoteStore/listFolders(_:)``, and the
    /// first request carries the root with every folder of `previous` too (a store sends them
    /// together): an idle poll is one batch. A folder asked for ahead that is no longer in the
    /// tree is left out; one found new is asked for with the next level.
    /// How many folders of one level are asked for in one batch at most.
    static let batchSize = 256

    static func list(_ store: any RemoteStore, previous: RemoteListing? = nil,
                     limits: Limits = Limits()) async throws(RemoteStoreError) -> RemoteListing {
        var answers: [RemotePath: FolderAnswer] = [:]
        var isUnchanged = previous != nil
        var count = 0
        var fetched: [RemotePath: Result<RemoteFolderListing, RemoteStoreError>] = [:]
        // Items in the folders fetched so far (checked against `limits.items` batch by batch).
        var fetchedItems = 0
        var ahead = [RemoteFolderRequest(path: .root, token: previous?.folders[.root]?.token)]
        if let previous {
            for (folder, answer) in previous.folders.sorted(by: { $0.key < $1.key }) where !folder.isRoot {
                ahead.append(RemoteFolderRequest(path: folder, token: answer.token))
            }
        }
        fetched = try await store.listFolders(ahead)
        for case .success(.listed(_, let items, _)) in fetched.values { fetchedItems += items.count }
        var level: [(folder: RemotePath, inConflictArea: Bool)] = [(.root, false)]
        while !level.isEmpty {
            let missing = level.filter { fetched[$0.folder] == nil }
                .map { RemoteFolderRequest(path: $0.folder, token: previous?.folders[$0.folder]?.token) }
            // In batches of `batchSize`, counting the items as they come: a server that claims a
            // million folders on one level is stopped at `limits.items`, not fetched whole first.
            var start = 0
            while start < missing.count {
                let batch = Array(missing[start..<min(start + Self.batchSize, missing.count)])
                start += batch.count
                for (folder, result) in try await store.listFolders(batch) {
                    fetched[folder] = result
                    if case .success(.listed(_, let items, _)) = result { fetchedItems += items.count }
                }
                if fetchedItems > limits.items {
                    throw .malformedResponse("more than \(limits.items) items on the server")
                }
            }
            var next: [(folder: RemotePath, inConflictArea: Bool)] = []
            for (folder, inConflictArea) in level {
                let known = previous?.folders[folder]
                let answer: FolderAnswer
                switch fetched[folder] {
                case .none:
                    throw .malformedResponse("the store gave no listing of /\(folder)")
                case .failure(let error):
                    throw error
                case .success(.unchanged):
                    guard let known else { throw .malformedResponse("the listing of /\(folder) was reported unchanged without an earlier one") }
                    answer = known
                case .success(.listed(let entry, let items, let token)):
                    answer = FolderAnswer(token: token, folder: entry, children: items.filter { $0.path.parent == folder })
                    isUnchanged = false
                }
                answers[folder] = answer
                count += answer.children.count
                if count > limits.items {
                    throw .malformedResponse("more than \(limits.items) items on the server")
                }
                if !answer.children.isEmpty, folder.components.count + 1 > limits.depth {
                    throw .malformedResponse("a folder deeper than \(limits.depth) levels on the server: /\(folder)")
                }
                for item in answer.children where item.isFolder {
                    if folder.isRoot, item.path.name == SyncExclusions.conflictArea {
                        next.append((item.path, true))
                    } else if inConflictArea || !SyncExclusions.excludes(item.path.name) {
                        next.append((item.path, inConflictArea))
                    }
                }
            }
            level = next
        }
        if isUnchanged, var same = previous, same.folders.count == answers.count {
            same.isUnchanged = true
            return same
        }
        return listing(from: answers)
    }

    /// The listing the folders' answers make.
    private static func listing(from answers: [RemotePath: FolderAnswer]) -> RemoteListing {
        var listing = RemoteListing()
        listing.root = answers[.root]?.folder
        listing.folders = answers
        let area = RemotePath.root.appending(SyncExclusions.conflictArea)
        for (folder, answer) in answers {
            let inConflictArea = area.map { folder.isInside($0) } ?? false
            for item in answer.children {
                if inConflictArea {
                    if !item.isFolder { listing.conflictFiles[item.path.description] = item }
                } else if folder.isRoot, item.isFolder, item.path.name == SyncExclusions.conflictArea {
                    continue
                } else if !SyncExclusions.excludes(item.path.name) {
                    listing.items[item.path.description] = item
                }
            }
        }
        return listing
    }
}
