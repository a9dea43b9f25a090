import Foundation

/// The server side of a sync: a tree of files and folders addressed by relative paths, with an
/// entity tag per item. WebDAV (``WebDAVStore``) is the first implementation; S3 comes next, so
/// nothing above this protocol knows which server it talks to.
///
/// **Paths** are ``RemotePath`` values: relative, `/`-separated, no empty, `.` or `..`
/// component, never absolute. A store never answers with an item outside its root: names from
/// the server that escape it are refused with ``RemoteStoreError/escapingPath(_:)``.
///
/// **No lost update.** Every write is conditional: ``RemoteWriteCondition/mustNotExist`` for a new
/// item (`If-None-Match: *`), ``RemoteWriteCondition/mustMatch(_:)`` with the last known strong tag
/// (`If-Match`). A store whose server does not honour conditions says so in
/// ``RemoteCapabilities``, and the agent then uses its documented safe mode or refuses.
///
/// **Never hang.** Every call is bounded by the store's request timeout and cancellable; a
/// server that stops answering fails the call with ``RemoteStoreError/timedOut``.
///
/// Thread safety: a store is `Sendable`; calls may run concurrently from any thread or task.
public protocol RemoteStore: Sendable {
    /// A description for messages and `clouddocs agent status` (the URL without credentials).
    var displayName: String { get }

    /// What this server was seen to honour (filled by ``probe()``; conservative before).
    var capabilities: RemoteCapabilities { get async }

    /// Finds out what the server honours, by writing, rewriting and conditionally writing a few
    /// probe files under a private folder of the root (removed afterwards).
    func probe() async throws(RemoteStoreError) -> RemoteCapabilities

    /// The item at `path` (`nil` when missing). For the root, `path` is ``RemotePath/root``.
    func item(at path: RemotePath) async throws(RemoteStoreError) -> RemoteItem?

    /// The items directly inside the folder at `path` (Depth 1), without the folder itself.
    /// Throws ``RemoteStoreError/notFound(_:)`` when the folder is missing.
    func list(_ path: RemotePath) async throws(RemoteStoreError) -> [RemoteItem]

    /// The folder at `path` itself and the items directly inside it, from one listing where the
    /// server allows (a WebDAV `Depth: 1` PROPFIND describes the folder too). Throws
    /// ``RemoteStoreError/notFound(_:)`` when the folder is missing.
    func listWithFolder(_ path: RemotePath) async throws(RemoteStoreError) -> (folder: RemoteItem, items: [RemoteItem])

    /// Streams the file at `path` into the local file `destination` (created or truncated; the
    /// caller picks a temporary name and renames it into place). `progress` is called with the
    /// bytes received so far and the expected total (when the server says it).
    /// Returns the tag of the bytes received (`nil` when the server sends none).
    func download(_ path: RemotePath, to destination: URL,
                  progress: @escaping @Sendable (Int64, Int64?) -> Void) async throws(RemoteStoreError) -> RemoteTag?

    /// Streams the local file `source` to `path` under `condition`. Returns the new tag when the
    /// server tells it (Apache does not: the caller then reads it with ``item(at:)``).
    /// Throws ``RemoteStoreError/preconditionFailed(_:)`` when the condition does not hold.
    func upload(_ source: URL, to path: RemotePath, condition: RemoteWriteCondition,
                progress: @escaping @Sendable (Int64, Int64) -> Void) async throws(RemoteStoreError) -> RemoteTag?

    /// Creates the folder at `path` (its parent must exist). An existing folder is not an error.
    func makeFolder(_ path: RemotePath) async throws(RemoteStoreError)

    /// Deletes the item (a folder with everything inside) at `path` under `condition`.
    /// A missing item is ``RemoteStoreError/notFound(_:)``.
    func delete(_ path: RemotePath, condition: RemoteWriteCondition) async throws(RemoteStoreError)

    /// Moves the item at `source` to `destination`, which must not exist.
    func move(_ source: RemotePath, to destination: RemotePath,
              condition: RemoteWriteCondition) async throws(RemoteStoreError)
}

extension RemoteStore {
    /// Two calls: ``item(at:)`` then ``list(_:)``. Stores that can describe a folder and its
    /// children at once implement it with one.
    public func listWithFolder(_ path: RemotePath) async throws(RemoteStoreError) -> (folder: RemoteItem, items: [RemoteItem]) {
        guard let folder = try await item(at: path), folder.isFolder else { throw .notFound(path) }
        return (folder, try await list(path))
    }
}
