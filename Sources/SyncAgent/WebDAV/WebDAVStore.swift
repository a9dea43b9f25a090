import FileCoordination
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The ``RemoteStore`` of a WebDAV collection (Nextcloud/ownCloud, Apache mod_dav, WsgiDAV,
/// `rclone serve webdav`, hosting providers): over `https` through FoundationNetworking's
/// `URLSession`, over plain `http` through the store's own HTTP/1.1 client (``WebDAVTransport``).
///
/// - Listings are `PROPFIND` (`Depth: 0` / `Depth: 1`), read with a bounded body
///   (``WebDAVConfiguration/maximumResponseBytes``) and a namespace-aware XML parser; every `href`
///   is checked (``WebDAVAddressing/path(forHref:)``) and one that leaves the root fails the call
///   with ``RemoteStoreError/escapingPath(_:)``.
/// - A folder listing whose answer is the same XML as the one a ``RemoteListingToken`` came from
///   is not parsed again (``listWithFolder(_:unlessUnchangedSince:)``, ``WebDAVBodyDigest``).
/// - File bodies stream: `GET` writes each piece to the destination as it arrives, `PUT` reads the
///   source file in pieces. Memory does not grow with the file's size.
/// - Writes carry their ``RemoteWriteCondition`` (`If-None-Match: *`, `If-Match` with a strong tag;
///   a weak tag is refused before anything is sent).
/// - Every call is bounded by the request timeout (as an idle limit) and ends with
///   ``RemoteStoreError/cancelled`` when the calling task is cancelled.
///
/// Thread safety: `Sendable`; calls may run concurrently from any task. Progress callbacks run on
/// a background thread of the transport (the URLSession delegate queue for `https`, the plain
/// client's exchange thread for `http`), never on the caller's actor.
public final class WebDAVStore: RemoteStore {
    /// The base URL (without credentials), as ``RemoteStore/displayName``. Never holds the password.
    public let displayName: String
    let addressing: WebDAVAddressing
    let transport: WebDAVTransport
    let requestTimeout: TimeInterval
    let maximumResponseBytes: Int
    /// The `Authorization` header value, when a user is configured. Never logged or described.
    private let authorization: String?
    /// What ``probe()`` found; `nil` before.
    private let probed = Locked<RemoteCapabilities?>(nil)
    /// The folder listings' requests of the last ``listFolders(_:)``, by folder (only those).
    private let listingRequests = Locked<[RemotePath: PreparedRequest]>([:])

    /// A store for `configuration`. Throws ``RemoteStoreError/refused(_:)`` when the URL is not
    /// http(s) with a host, or is plain `http` to a host that is not loopback without
    /// ``WebDAVConfiguration/allowsInsecureHTTP``. Nothing is sent to the server.
    public init(configuration: WebDAVConfiguration) throws(RemoteStoreError) {
        let base = try configuration.validatedBaseURL()
        addressing = WebDAVAddressing(baseURL: base)
        displayName = configuration.displayURL
        requestTimeout = configuration.requestTimeout
        maximumResponseBytes = max(4096, configuration.maximumResponseBytes)
        transport = WebDAVTransport(requestTimeout: configuration.requestTimeout,
                                     exchangeDeadline: configuration.exchangeDeadline,
                                     transferDeadline: configuration.transferDeadline)
        if let user = configuration.user {
            let credentials = Data((user + ":" + (configuration.password ?? "")).utf8).base64EncodedString()
            authorization = "Basic " + credentials
        } else {
            authorization = nil
        }
    }

    /// What ``probe()`` found, or ``RemoteCapabilities/unknown`` before a probe succeeded.
    public var capabilities: RemoteCapabilities {
        get async { probed.withLock { $0 } ?? .unknown }
    }

    /// What ``probe()`` found, or `nil` before a probe succeeded (synchronous, for status output).
    public var probedCapabilities: RemoteCapabilities? { probed.withLock { $0 } }

    func remember(_ capabilities: RemoteCapabilities) { probed.withLock { $0 = capabilities } }

    // MARK: Requests

    /// A request for `method` on `url` with the store's timeout and credentials.
    func request(_ method: String, _ url: URL, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: requestTimeout)
        request.httpMethod = method
        request.setValue("clouddocsd", forHTTPHeaderField: "User-Agent")
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Sends a request whose answer is read into memory (bounded).
    func perform(_ method: String, _ url: URL, headers: [String: String] = [:], body: WebDAVTransport.Body = .none,
                 sendProgress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws(RemoteStoreError) -> WebDAVResponse {
        let exchange = WebDAVExchange(sink: .memory(limit: maximumResponseBytes), description: "\(method) \(url.path)",
                                      sendProgress: sendProgress)
        return try await transport.send(request(method, url, headers: headers), body: body, exchange: exchange)
    }

    /// The header fields for `condition` on `method` at `path`. A weak tag and `mustNotExist` on
    /// DELETE/MOVE are refused.
    func conditionHeaders(_ condition: RemoteWriteCondition, method: String, path: RemotePath) throws(RemoteStoreError) -> [String: String] {
        switch condition {
        case .unconditional: return [:]
        case .mustNotExist:
            guard method == "PUT" else { throw .refused("\(method) /\(path): \"must not exist\" is a condition for PUT only") }
            return ["If-None-Match": "*"]
        case .mustMatch(let tag):
            guard !tag.isWeak else {
                throw .refused("\(method) /\(path): the weak tag \(tag) cannot guard a write (servers compare If-Match strongly)")
            }
            return ["If-Match": tag.value]
        }
    }

    /// `PROPFIND` with `depth` on `path` (as a folder URL when `asFolder`): the responses, or `nil`
    /// on 404.
    func propfind(_ path: RemotePath, depth: String, asFolder: Bool) async throws(RemoteStoreError) -> [WebDAVResponseEntry]? {
        guard let body = try await propfindBody(path, depth: depth, asFolder: asFolder) else { return nil }
        return try WebDAVMultistatus.parse(body)
    }

    /// `PROPFIND` with `depth` on `path`: the `207` answer's body as it came (bounded), or `nil` on 404.
    /// `oc:fileid` is asked for unless the probe found the server gives none (its answers would
    /// only say, for every item, that it has none).
    func propfindBody(_ path: RemotePath, depth: String, asFolder: Bool) async throws(RemoteStoreError) -> Data? {
        let withoutFileIDs = probed.withLock { $0.map { !$0.hasFileIDs } ?? false }
        let response = try await perform("PROPFIND", addressing.url(for: path, isFolder: asFolder),
                                         headers: ["Depth": depth, "Content-Type": "application/xml; charset=utf-8"],
                                         body: .data(withoutFileIDs ? WebDAVMultistatus.requestBodyWithoutFileIDs
                                                                    : WebDAVMultistatus.requestBody))
        if response.status == 404 { return nil }
        guard response.status == 207 else { throw WebDAVStatus.error(for: response, method: "PROPFIND", path: path) }
        return response.body
    }

    /// The item a response describes, its `href` checked.
    func item(from entry: WebDAVResponseEntry) throws(RemoteStoreError) -> RemoteItem {
        let path = try addressing.path(forHref: entry.href)
        let size = entry.isCollection ? nil : entry.contentLength.flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        return RemoteItem(path: path, isFolder: entry.isCollection, tag: entry.etag.flatMap(RemoteTag.init(parsing:)),
                          size: size, modified: entry.lastModified.flatMap(WebDAVDates.parse), fileID: entry.fileID)
    }

    // MARK: RemoteStore

    public func item(at path: RemotePath) async throws(RemoteStoreError) -> RemoteItem? {
        guard let entries = try await propfind(path, depth: "0", asFolder: path.isRoot) else { return nil }
        var found: RemoteItem?
        for entry in entries {
            let item = try item(from: entry)
            if item.path == path { found = item }
        }
        guard let found else { throw .malformedResponse("PROPFIND /\(path) did not describe the item asked for") }
        return found
    }

    public func list(_ path: RemotePath) async throws(RemoteStoreError) -> [RemoteItem] {
        try await listWithFolder(path).items
    }

    /// One `Depth: 1` PROPFIND: the folder's own entry and its children's.
    public func listWithFolder(_ path: RemotePath) async throws(RemoteStoreError) -> (folder: RemoteItem, items: [RemoteItem]) {
        guard let entries = try await propfind(path, depth: "1", asFolder: true) else { throw .notFound(path) }
        return try folderListing(path, entries)
    }

    /// One `Depth: 1` PROPFIND; its body is read (parsed, every `href` checked) only when its
    /// digest (``WebDAVBodyDigest``) differs from `token`'s. The body, not the folder's tag: on
    /// Apache a folder's tag is its own modification time and size, unchanged by a same-size
    /// rewrite of a file inside, whose tag in the body changes.
    public func listWithFolder(_ path: RemotePath,
                               unlessUnchangedSince token: RemoteListingToken?) async throws(RemoteStoreError) -> RemoteFolderListing {
        guard let body = try await propfindBody(path, depth: "1", asFolder: true) else { throw .notFound(path) }
        let digest = WebDAVBodyDigest.token(of: body)
        if let token, token == digest { return .unchanged }
        let listed = try folderListing(path, WebDAVMultistatus.parse(body))
        return .listed(folder: listed.folder, items: listed.items, token: digest)
    }

    /// ``listWithFolder(_:unlessUnchangedSince:)`` of every folder in one go
    /// (``WebDAVTransport/sendAll(_:maximumBody:handle:)``: over `http`, pipelined on one
    /// connection from one thread). Each answer is digested (and parsed only when it changed) on
    /// the transport's thread as it arrives; a status other than 207 is that folder's failure.
    /// An answer over the size limit or that cannot be framed ends the call for every folder
    /// (thrown as `.malformedResponse`): the connection it came on cannot be trusted for the
    /// answers after it. Runs on the caller's task; the transport's thread does the I/O.
    public func listFolders(_ folders: [RemoteFolderRequest]) async throws(RemoteStoreError) -> [RemotePath: Result<RemoteFolderListing, RemoteStoreError>] {
        let withoutFileIDs = probed.withLock { $0.map { !$0.hasFileIDs } ?? false }
        let body = withoutFileIDs ? WebDAVMultistatus.requestBodyWithoutFileIDs : WebDAVMultistatus.requestBody
        // The requests of the last call, kept: the same folders are asked for at every poll.
        let kept = listingRequests.withLock { $0 }
        var prepared: [RemotePath: PreparedRequest] = [:]
        let requests = folders.map { folder in
            if let same = prepared[folder.path] ?? kept[folder.path], same.body == body {
                prepared[folder.path] = same
                return same
            }
            let made = PreparedRequest(request("PROPFIND", addressing.url(for: folder.path, isFolder: true),
                                               headers: ["Depth": "1", "Content-Type": "application/xml; charset=utf-8"]), body: body)
            prepared[folder.path] = made
            return made
        }
        listingRequests.withLock { $0 = prepared }
        let answers = try await transport.sendAll(requests, maximumBody: maximumResponseBytes) { [self] index, response in
            let folder = folders[index]
            return (folder.path, Result { () throws(RemoteStoreError) -> RemoteFolderListing in
                if response.status == 404 { throw .notFound(folder.path) }
                guard response.status == 207 else { throw WebDAVStatus.error(for: response, method: "PROPFIND", path: folder.path) }
                let digest = WebDAVBodyDigest.token(of: response.body)
                if let token = folder.token, token == digest { return .unchanged }
                let listed = try folderListing(folder.path, WebDAVMultistatus.parse(response.body))
                return .listed(folder: listed.folder, items: listed.items, token: digest)
            })
        }
        var results: [RemotePath: Result<RemoteFolderListing, RemoteStoreError>] = [:]
        for (path, result) in answers { results[path] = result }
        return results
    }

    /// The folder at `path` and its children, from the responses of a `Depth: 1` PROPFIND.
    private func folderListing(_ path: RemotePath,
                               _ entries: [WebDAVResponseEntry]) throws(RemoteStoreError) -> (folder: RemoteItem, items: [RemoteItem]) {
        var items: [RemoteItem] = []
        var folder: RemoteItem?
        var seen = Set<RemotePath>()
        for entry in entries {
            let item = try item(from: entry)
            if item.path == path {
                guard item.isFolder else { throw .notFound(path) }
                folder = item
                continue
            }
            guard item.path.parent == path else { throw .escapingPath(entry.href) }
            if seen.insert(item.path).inserted { items.append(item) }
        }
        guard let folder else { throw .malformedResponse("PROPFIND /\(path) did not describe the folder") }
        return (folder, items.sorted { $0.path < $1.path })
    }

    public func makeFolder(_ path: RemotePath) async throws(RemoteStoreError) {
        guard !path.isRoot else { return }
        let response = try await perform("MKCOL", addressing.url(for: path, isFolder: true))
        switch response.status {
        case 200, 201, 204: return
        case 405, 403:
            // Something exists there: fine when it is a folder. Apache answers 403 ("File exists")
            // instead of 405 when another client made the folder during this request.
            if let existing = try await item(at: path), existing.isFolder { return }
            throw WebDAVStatus.error(for: response, method: "MKCOL", path: path)
        default: throw WebDAVStatus.error(for: response, method: "MKCOL", path: path)
        }
    }

    public func delete(_ path: RemotePath, condition: RemoteWriteCondition) async throws(RemoteStoreError) {
        guard !path.isRoot else { throw .refused("the root of the store is never deleted") }
        let headers = try conditionHeaders(condition, method: "DELETE", path: path)
        let response = try await perform("DELETE", addressing.url(for: path), headers: headers)
        switch response.status {
        case 200, 202, 204: return
        default: throw WebDAVStatus.error(for: response, method: "DELETE", path: path)
        }
    }

    public func move(_ source: RemotePath, to destination: RemotePath,
                     condition: RemoteWriteCondition) async throws(RemoteStoreError) {
        guard !source.isRoot, !destination.isRoot else { throw .refused("the root of the store is never moved") }
        guard !destination.isInside(source) else { throw .refused("/\(source) cannot move into itself (/\(destination))") }
        var headers = try conditionHeaders(condition, method: "MOVE", path: source)
        headers["Destination"] = addressing.url(for: destination).absoluteString
        headers["Overwrite"] = "F"
        let response = try await perform("MOVE", addressing.url(for: source), headers: headers)
        switch response.status {
        case 200, 201, 204: return
        case 412:
            // With `Overwrite: F`, 412 means an existing destination or a failed If-Match.
            if try await item(at: destination) != nil { throw .preconditionFailed(destination) }
            throw .preconditionFailed(source)
        default: throw WebDAVStatus.error(for: response, method: "MOVE", path: source)
        }
    }
}
