import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import SystemSupport

extension WebDAVStore {
    /// `GET`, streamed into `destination` piece by piece as the bytes arrive (memory does not grow
    /// with the file). `destination` is created or truncated only when the server answers 2xx; on a
    /// failure after that it is removed. `progress` runs on a background thread of the transport.
    public func download(_ path: RemotePath, to destination: URL,
                         progress: @escaping @Sendable (Int64, Int64?) -> Void) async throws(RemoteStoreError) -> RemoteTag? {
        try await download(path, to: destination, listedSize: nil, progress: progress)
    }

    /// `GET` as ``download(_:to:progress:)``, cut once the body passes `listedSize` plus a margin
    /// (``RemoteStore/downloadLimit(forListedSize:)``), announced length or not: the call throws
    /// ``RemoteStoreError/malformedResponse(_:)`` before the excess is written, and `destination`
    /// is removed.
    public func download(_ path: RemotePath, to destination: URL, listedSize: Int64?,
                         progress: @escaping @Sendable (Int64, Int64?) -> Void) async throws(RemoteStoreError) -> RemoteTag? {
        let url = addressing.url(for: path)
        let exchange = WebDAVExchange(sink: .file(destination), description: "GET \(url.path)", receiveProgress: progress,
                                      maximumFileBytes: listedSize.map { Self.downloadLimit(forListedSize: $0) })
        let response: WebDAVResponse
        do {
            response = try await transport.send(request("GET", url), body: .none, exchange: exchange)
        } catch {
            if exchange.createdLocalFile { unlink(destination.path) }
            throw error
        }
        guard response.status == 200 else {
            if exchange.createdLocalFile { unlink(destination.path) }
            throw WebDAVStatus.error(for: response, method: "GET", path: path)
        }
        return response.tag
    }

    /// `PUT` of the local file `source`, read in pieces (never whole in memory), under `condition`.
    /// Throws ``RemoteStoreError/localFile(_:errno:)`` when `source` is not a readable regular file,
    /// ``RemoteStoreError/preconditionFailed(_:)`` on 412, ``RemoteStoreError/notFound(_:)`` when
    /// the parent folder is missing (409). `progress` runs on a background thread of the transport.
    public func upload(_ source: URL, to path: RemotePath, condition: RemoteWriteCondition,
                       progress: @escaping @Sendable (Int64, Int64) -> Void) async throws(RemoteStoreError) -> RemoteTag? {
        guard !path.isRoot else { throw .refused("the root of the store is a folder, not a file") }
        try Self.checkReadableRegularFile(source)
        var headers = try conditionHeaders(condition, method: "PUT", path: path)
        headers["Content-Type"] = "application/octet-stream"
        let response = try await perform("PUT", addressing.url(for: path), headers: headers, body: .file(source),
                                         sendProgress: progress)
        switch response.status {
        case 200, 201, 204: return response.tag
        default: throw WebDAVStatus.error(for: response, method: "PUT", path: path)
        }
    }

    /// Whether ``upload(_:to:condition:progress:)`` reads its file through the plain-socket client
    /// (an `http` server), which checks the file did not change while it was read and ends the
    /// request before its last piece when it did (a torn body never lands). `https` goes through
    /// URLSession, which reads the file on its own: there the caller must upload a stable copy.
    public var checksFileBodiesWhileSending: Bool { addressing.baseURL.scheme?.lowercased() == "http" }

    /// The item at `path` as a `Depth: 0` `PROPFIND` without its tag tells it (kind, size, date,
    /// file id), or `nil` on 404 — cheap where the tag is costly: Apache's `FileETag Digest`
    /// hashes the whole file for each tag it gives. For a download whose `GET` answer carries
    /// the tag of the bytes it brings.
    public func itemWithoutTag(at path: RemotePath) async throws(RemoteStoreError) -> RemoteItem? {
        let response = try await perform("PROPFIND", addressing.url(for: path, isFolder: path.isRoot),
                                         headers: ["Depth": "0", "Content-Type": "application/xml; charset=utf-8"],
                                         body: .data(Self.untaggedPropfindBody))
        if response.status == 404 { return nil }
        guard response.status == 207 else { throw WebDAVStatus.error(for: response, method: "PROPFIND", path: path) }
        var found: RemoteItem?
        for entry in try WebDAVMultistatus.parse(response.body) {
            let item = try item(from: entry)
            if item.path == path { found = item }
        }
        guard let found else { throw .malformedResponse("PROPFIND /\(path) did not describe the item asked for") }
        return found
    }

    /// ``WebDAVMultistatus/requestBody`` without `getetag`.
    static let untaggedPropfindBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>\
        <d:resourcetype/><d:getcontentlength/><d:getlastmodified/><oc:fileid/>\
        </d:prop></d:propfind>
        """.utf8)

    /// Throws ``RemoteStoreError/localFile(_:errno:)`` unless `url` opens for reading and is a
    /// regular file (the transport would otherwise fail in ways that say less).
    static func checkReadableRegularFile(_ url: URL) throws(RemoteStoreError) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .localFile(url, errno: Errno(rawValue: errno)) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .localFile(url, errno: Errno(rawValue: errno)) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .localFile(url, errno: Errno(rawValue: EISDIR)) }
    }
}
