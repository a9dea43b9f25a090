import Foundation

/// The mapping between ``RemotePath`` values and the server's URLs and `href`s, for one base
/// collection. Building a URL percent-encodes every byte of a name outside the unreserved set, so a
/// name with spaces, `%`, `#`, `?` or any UTF-8 stays one component. Reading an `href` trusts
/// nothing: see ``path(forHref:)``.
struct WebDAVAddressing: Sendable {
    /// The base collection, with a trailing `/` (from ``WebDAVConfiguration/validatedBaseURL()``).
    let baseURL: URL
    /// The base URL's path, decoded into components (empty for the server root).
    let baseComponents: [String]
    /// `baseURL.absoluteString`, made once (every request's URL starts with it).
    private let baseText: String

    init(baseURL: URL) {
        self.baseURL = baseURL
        baseText = baseURL.absoluteString
        let encodedPath = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        baseComponents = encodedPath.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
    }

    /// Whether `byte` stays as it is in a path component (RFC 3986 unreserved).
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `component` with every UTF-8 byte outside the unreserved set percent-encoded (`%XX`).
    /// Byte by byte rather than through Foundation's `addingPercentEncoding`, which costs
    /// several times more and runs for every request.
    static func percentEncoded(_ component: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(component.utf8.count)
        for byte in component.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The URL of `path`; with a trailing `/` when `isFolder` (collections).
    func url(for path: RemotePath, isFolder: Bool = false) -> URL {
        var text = baseText
        text += path.components.map(Self.percentEncoded).joined(separator: "/")
        if isFolder && !path.isRoot { text += "/" }
        // Every byte outside the unreserved set is percent-encoded, so the string is a valid URL.
        return URL(string: text) ?? baseURL
    }

    /// The path an `href` of a PROPFIND answer names, relative to the base collection.
    ///
    /// Refused with ``RemoteStoreError/escapingPath(_:)``: an `href` naming another scheme, host or
    /// port; one with a query or fragment; a relative one; one outside the base path; one with an
    /// empty, `.` or `..` component (also percent-encoded, as `%2e%2e`); one with an encoded `/`
    /// (`%2F`) or NUL in a component; one whose percent-encoding is invalid.
    func path(forHref href: String) throws(RemoteStoreError) -> RemotePath {
        let trimmed = WebDAVMultistatus.trimmed(href)
        // Checked on the raw text: URLComponents would quietly re-encode a stray `%` as `%25`.
        guard Self.isValidPercentEncoding(Substring(trimmed)),
              let components = URLComponents(string: trimmed), components.query == nil, components.fragment == nil else {
            throw .escapingPath(href)
        }
        if components.scheme != nil || components.host != nil {
            guard components.scheme?.lowercased() == baseURL.scheme?.lowercased(),
                  components.host?.lowercased() == baseURL.host?.lowercased(),
                  effectivePort(components.port, scheme: components.scheme) == effectivePort(baseURL.port, scheme: baseURL.scheme),
                  components.user == nil, components.password == nil else {
                throw .escapingPath(href)
            }
        }
        let encodedPath = components.percentEncodedPath
        guard encodedPath.hasPrefix("/") else { throw .escapingPath(href) }
        var encodedComponents = encodedPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        // A collection's href ends with `/`: one empty last component is allowed, no other.
        if encodedComponents.last?.isEmpty == true { encodedComponents.removeLast() }
        var decoded: [String] = []
        for encoded in encodedComponents {
            guard Self.isValidPercentEncoding(encoded), let name = String(encoded).removingPercentEncoding, RemotePath.isValidComponent(name) else {
                throw .escapingPath(href)
            }
            decoded.append(name)
        }
        guard decoded.starts(with: baseComponents),
              let path = RemotePath(components: decoded.dropFirst(baseComponents.count)) else {
            throw .escapingPath(href)
        }
        return path
    }

    /// Whether every `%` in `text` starts a `%XX` escape of two hex digits.
    static func isValidPercentEncoding(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else { return false }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private func effectivePort(_ port: Int?, scheme: String?) -> Int? {
        if let port { return port }
        switch scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
