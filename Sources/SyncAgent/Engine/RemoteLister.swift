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
    static let maximumItems = 1_000_000

    static func list(_ store: any RemoteStore) async throws(RemoteStoreError) -> RemoteListing {
        var listing = RemoteListing()
        listing.root = try await store.item(at: .root)
        var pending: [RemotePath] = [.root]
        while let folder = pending.popLast() {
            for item in try await store.list(folder) {
                guard item.path.parent == folder else { continue }
                if folder.isRoot, item.path.name == SyncExclusions.conflictArea, item.isFolder {
                    try await listConflictArea(store, item.path, into: &listing)
                    continue
                }
                if SyncExclusions.excludes(item.path.name) { continue }
                listing.items[item.path.description] = item
                if item.isFolder { pending.append(item.path) }
                if listing.items.count > maximumItems {
                    throw .malformedResponse("more than \(maximumItems) items on the server")
                }
            }
        }
        return listing
    }

    private static func listConflictArea(_ store: any RemoteStore, _ area: RemotePath,
                                         into listing: inout RemoteListing) async throws(RemoteStoreError) {
        var pending: [RemotePath] = [area]
        while let folder = pending.popLast() {
            for item in try await store.list(folder) where item.path.parent == folder {
                if item.isFolder { pending.append(item.path) } else { listing.conflictFiles[item.path.description] = item }
                if listing.conflictFiles.count > maximumItems {
                    throw .malformedResponse("more than \(maximumItems) conflict versions on the server")
                }
            }
        }
    }
}
