import Foundation

/// Where a ``WebDAVStore`` connects and how: the collection that is the store's root, the
/// credentials and the limits. A value; the password is never part of any description.
public struct WebDAVConfiguration: Sendable, CustomStringConvertible {
    /// The collection that is the root of the store (`https://cloud.example.org/remote.php/dav/files/me/Docs/`).
    /// A missing trailing `/` is added.
    public var baseURL: URL
    /// The user for HTTP Basic authentication (`nil`: no `Authorization` header).
    public var user: String?
    /// The password for HTTP Basic authentication. Never logged, never in ``description``.
    public var password: String?
    /// How long a request may stay without any byte moving before it fails with
    /// ``RemoteStoreError/timedOut`` (the URLSession request timeout: an idle limit, so large
    /// transfers are not cut while bytes flow).
    public var requestTimeout: TimeInterval
    /// Allow plain `http` to a host that is not a loopback address. Off by default: credentials and
    /// contents would cross the network unencrypted.
    public var allowsInsecureHTTP: Bool
    /// The largest answer body read into memory (PROPFIND listings, error bodies); a larger one fails
    /// with ``RemoteStoreError/malformedResponse(_:)``. File bodies stream and are not bounded by it.
    public var maximumResponseBytes: Int
    /// The longest a request that is not a file transfer (PROPFIND, MKCOL, DELETE, MOVE, …) may
    /// take in all, however steadily bytes trickle in; then it fails with
    /// ``RemoteStoreError/timedOut``. ``requestTimeout`` alone is an idle limit that a server
    /// sending one byte a minute never reaches.
    public var exchangeDeadline: TimeInterval
    /// The longest a file transfer (a `GET` into a file or a `PUT` from one) may take in all; then it
    /// fails with ``RemoteStoreError/timedOut``. Generous, so slow links still move large files.
    public var transferDeadline: TimeInterval

    /// The default ``exchangeDeadline``: 5 minutes.
    public static let defaultExchangeDeadline: TimeInterval = 5 * 60
    /// The default ``transferDeadline``: 24 hours.
    public static let defaultTransferDeadline: TimeInterval = 24 * 60 * 60

    /// The default ``maximumResponseBytes``: 32 MiB, a listing of roughly 100,000 items.
    public static let defaultMaximumResponseBytes = 32 << 20

    public init(baseURL: URL, user: String? = nil, password: String? = nil, requestTimeout: TimeInterval = 60,
                allowsInsecureHTTP: Bool = false, maximumResponseBytes: Int = defaultMaximumResponseBytes,
                exchangeDeadline: TimeInterval = defaultExchangeDeadline,
                transferDeadline: TimeInterval = defaultTransferDeadline) {
        self.baseURL = baseURL
        self.user = user
        self.password = password
        self.requestTimeout = requestTimeout
        self.allowsInsecureHTTP = allowsInsecureHTTP
        self.maximumResponseBytes = maximumResponseBytes
        self.exchangeDeadline = exchangeDeadline
        self.transferDeadline = transferDeadline
    }

    /// The base URL without user, password, query or fragment, for messages.
    public var displayURL: String {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else { return "(invalid URL)" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? "(invalid URL)"
    }

    public var description: String {
        "WebDAV \(displayURL)" + (user.map { " as \($0)" } ?? "")
    }

    /// Whether `host` is a literal loopback address: `127.0.0.0/8` or `::1`. The name `localhost`
    /// is not accepted: `/etc/hosts` or DNS may map it to another machine, and plain `http` there
    /// would send credentials across the network.
    public static func isLoopback(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "::1" || name == "0:0:0:0:0:0:0:1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return false }
        let values = octets.compactMap { octet -> Int? in
            guard !octet.isEmpty, octet.count <= 3, octet.allSatisfy(\.isASCII), let value = Int(octet), value <= 255
            else { return nil }
            return value
        }
        return values.count == 4 && values[0] == 127
    }

    /// Checks the configuration: an `http`/`https` URL with a host; plain `http` only to a loopback
    /// host or with ``allowsInsecureHTTP``. Returns the base URL with a trailing `/` and without
    /// user, password, query or fragment; throws ``RemoteStoreError/refused(_:)`` saying why not.
    func validatedBaseURL() throws(RemoteStoreError) -> URL {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty else {
            throw .refused("the server URL \(displayURL) is not an http or https URL with a host")
        }
        switch scheme {
        case "https": break
        case "http":
            guard Self.isLoopback(host: host) || allowsInsecureHTTP else {
                throw .refused("plain http to \(host) is refused (credentials and files would cross the network "
                               + "unencrypted): use https, or opt in to insecure http explicitly")
            }
        default:
            throw .refused("the server URL \(displayURL) is not an http or https URL")
        }
        components.scheme = scheme
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        if !components.percentEncodedPath.hasSuffix("/") { components.percentEncodedPath += "/" }
        guard let url = components.url else { throw .refused("the server URL \(displayURL) is not valid") }
        return url
    }
}
