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

    /// Like ``listWithFolder(_:)``, but answers ``RemoteFolderListing/unchanged`` when the
    /// server's answer is the same as the one `token` came from (a poll of an unchanged folder
    /// then costs the request, not the reading of its answer). A store that cannot tell always
    /// lists, with a `nil` token (and the folder's own entry at least for the root).
    /// Throws ``RemoteStoreError/notFound(_:)`` when the folder is missing.
    func listWithFolder(_ path: RemotePath,
                        unlessUnchangedSince token: RemoteListingToken?) async throws(RemoteStoreError) -> RemoteFolderListing

    /// ``listWithFolder(_:unlessUnchangedSince:)`` of several folders at once (a store may send
    /// the requests together: one connection, one thread). Each folder's own failure (missing,
    /// refused, a malformed answer) is its result; a failure that ends the call for all — the
    /// server cannot be reached, a timeout, cancellation (``RemoteStoreError/isTransient`` or
    /// ``RemoteStoreError/cancelled``) — is thrown.
    func listFolders(_ folders: [RemoteFolderRequest]) async throws(RemoteStoreError) -> [RemotePath: Result<RemoteFolderListing, RemoteStoreError>]

    /// Streams the file at `path` into the local file `destination` (created or truncated; the
    /// caller picks a temporary name and renames it into place). `progress` is called with the
    /// bytes received so far and the expected total (when the server says it).
    /// Returns the tag of the bytes received (`nil` when the server sends none).
    func download(_ path: RemotePath, to destination: URL,
                  progress: @escaping @Sendable (Int64, Int64?) -> Void) async throws(RemoteStoreError) -> RemoteTag?

    /// Like ``download(_:to:progress:)``, for a file the listing said has `listedSize` bytes: an
    /// answer that grows past that size plus a margin (``RemoteStore/downloadLimit(forListedSize:)``)
    /// is cut, whether or not it announced a length (a chunked answer that never ends cannot fill
    /// the disk): it throws ``RemoteStoreError/malformedResponse(_:)`` and `destination` is removed.
    /// `nil`: no listed size, bounded only by the answer's `Content-Length` when it has one.
    func download(_ path: RemotePath, to destination: URL, listedSize: Int64?,
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

/// What a store remembers of one answer to a folder listing: enough to tell that the next
/// answer is the same, byte for byte (for WebDAV, a digest and the length of the `PROPFIND` body:
/// ``WebDAVBodyDigest``). Not a server tag: on Apache a folder's tag is its own modification time
/// and size, which a same-size rewrite of a file inside leaves as it was, while the file's tag in
/// the answer changes.
public struct RemoteListingToken: Sendable, Hashable {
    public let high: UInt64
    public let low: UInt64
    /// The length of the answer, in bytes.
    public let length: Int

    public init(high: UInt64, low: UInt64, length: Int) {
        self.high = high
        self.low = low
        self.length = length
    }
}

/// One folder of ``RemoteStore/listFolders(_:)``: its path and the token of its last answer.
public struct RemoteFolderRequest: Sendable {
    /// The folder to list.
    public var path: RemotePath
    /// The token of its last answer (nil for a folder never listed): an unchanged folder is
    /// answered ``RemoteFolderListing/unchanged``.
    public var token: RemoteListingToken?

    /// A request for `path`, with the token of its last answer.
    public init(path: RemotePath, token: RemoteListingToken?) {
        self.path = path
        self.token = token
    }
}

/// The answer of ``RemoteStore/listWithFolder(_:unlessUnchangedSince:)``.
public enum RemoteFolderListing: Sendable {
    /// The answer is the one the given token came from: the folder and its items are as they were.
    case unchanged
    /// The folder's own entry (always for the root; for other folders when the same answer
    /// carried it, as a WebDAV `Depth: 1` listing does), its items (sorted by path), and the
    /// token of this answer (`nil` when the store cannot tell answers apart).
    case listed(folder: RemoteItem?, items: [RemoteItem], token: RemoteListingToken?)
}

extension RemoteStore {
    /// Forwards to ``download(_:to:progress:)`` without a bound: for stores whose answers cannot
    /// run past the file (in memory, tests).
    public func download(_ path: RemotePath, to destination: URL, listedSize: Int64?,
                         progress: @escaping @Sendable (Int64, Int64?) -> Void) async throws(RemoteStoreError) -> RemoteTag? {
        try await download(path, to: destination, progress: progress)
    }

    /// The most bytes a download of a file listed with `listedSize` bytes may bring: the size plus
    /// a margin of a tenth, at least 1 MiB (a file that grew a little since the listing still
    /// arrives; one that grew more fails this pass and is fetched by the next, with its new size).
    public static func downloadLimit(forListedSize listedSize: Int64) -> Int64 {
        let size = max(0, listedSize)
        let margin = max(Int64(1 << 20), size / 10)
        return size > Int64.max - margin ? Int64.max : size + margin
    }

    /// Always lists, with no token, for stores that cannot compare answers: the root with
    /// ``listWithFolder(_:)``, any other folder with ``list(_:)`` alone (no entry of its own).
    public func listWithFolder(_ path: RemotePath,
                               unlessUnchangedSince token: RemoteListingToken?) async throws(RemoteStoreError) -> RemoteFolderListing {
        if path.isRoot {
            let listed = try await listWithFolder(path)
            return .listed(folder: listed.folder, items: listed.items, token: nil)
        }
        return .listed(folder: nil, items: try await list(path), token: nil)
    }

    /// One ``listWithFolder(_:unlessUnchangedSince:)`` after the other.
    public func listFolders(_ folders: [RemoteFolderRequest]) async throws(RemoteStoreError) -> [RemotePath: Result<RemoteFolderListing, RemoteStoreError>] {
        var answers: [RemotePath: Result<RemoteFolderListing, RemoteStoreError>] = [:]
        for folder in folders where answers[folder.path] == nil {
            do {
                answers[folder.path] = .success(try await listWithFolder(folder.path, unlessUnchangedSince: folder.token))
            } catch {
                if error.isTransient || error == .cancelled { throw error }
                answers[folder.path] = .failure(error)
            }
        }
        return answers
    }

    /// Two calls: ``item(at:)`` then ``list(_:)``. Stores that can describe a folder and its
    /// children at once implement it with one.
    public func listWithFolder(_ path: RemotePath) async throws(RemoteStoreError) -> (folder: RemoteItem, items: [RemoteItem]) {
        guard let folder = try await item(at: path), folder.isFolder else { throw .notFound(path) }
        return (folder, try await list(path))
    }
}
