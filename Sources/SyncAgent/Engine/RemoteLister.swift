/// What one listing of the server found.
struct RemoteListing: Sendable {
    /// The synced items by container-relative path.
    var items: [String: RemoteItem] = [:]
    /// The files of the conflict area, by their full remote path (`.clouddocs-conflicts/…`).
    var conflictFiles: [String: RemoteItem] = [:]
    /// The root folder itself.
    var root: RemoteItem?
}

/// Lists the whole tree of a ``RemoteStore`` with one `Depth: 1` listing per folder.
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

    /// Counts one more listed item and checks the depth of `path`.
    private static func admit(_ path: RemotePath, count: inout Int, _ limits: Limits) throws(RemoteStoreError) {
        count += 1
        if count > limits.items {
            throw .malformedResponse("more than \(limits.items) items on the server")
        }
        if path.components.count > limits.depth {
            throw .malformedResponse("a folder deeper than \(limits.depth) levels on the server: /\(path.parent ?? .root)")
        }
    }

    /// Lists the tree; throws ``RemoteStoreError/malformedResponse(_:)`` past `limits` (more items,
    /// folders included, or deeper paths), and whatever the store's listings throw.
    static func list(_ store: any RemoteStore, limits: Limits = Limits()) async throws(RemoteStoreError) -> RemoteListing {
        var listing = RemoteListing()
        var count = 0
        var pending: [RemotePath] = [.root]
        while let folder = pending.popLast() {
            let children: [RemoteItem]
            if folder.isRoot {
                // The root's own entry (its tag and file id) comes with its listing: one request.
                let root = try await store.listWithFolder(.root)
                listing.root = root.folder
                children = root.items
            } else {
                children = try await store.list(folder)
            }
            for item in children {
                guard item.path.parent == folder else { continue }
                try admit(item.path, count: &count, limits)
                if folder.isRoot, item.path.name == SyncExclusions.conflictArea, item.isFolder {
                    try await listConflictArea(store, item.path, into: &listing, count: &count, limits)
                    continue
                }
                if SyncExclusions.excludes(item.path.name) { continue }
                listing.items[item.path.description] = item
                if item.isFolder { pending.append(item.path) }
            }
        }
        return listing
    }

    private static func listConflictArea(_ store: any RemoteStore, _ area: RemotePath, into listing: inout RemoteListing,
                                         count: inout Int, _ limits: Limits) async throws(RemoteStoreError) {
        var pending: [RemotePath] = [area]
        while let folder = pending.popLast() {
            for item in try await store.list(folder) where item.path.parent == folder {
                try admit(item.path, count: &count, limits)
                if item.isFolder { pending.append(item.path) } else { listing.conflictFiles[item.path.description] = item }
            }
        }
    }
}
