import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The head of an HTTP/1.1 request (request line and header fields) as the bytes that go on the
/// wire, built from a `URLRequest`: `Host` from the URL, the request's own header fields as they
/// are (the store sets `Authorization`, conditions, `Depth`, …), and `Content-Length` when a body
/// goes with it. Never `Expect: 100-continue`, never `Transfer-Encoding`, no `Accept-Encoding`
/// (answers come as they are stored, and nothing needs to be decompressed).
///
/// A method, target or header field that would break the framing (a space or a line break where
/// none may be) is refused: ``HTTPFailure/badRequest(_:)``. Header values are never part of the
/// message (they may be credentials).
struct HTTPRequestHead {
    let method: String
    /// `host:port` to connect to.
    let host: String
    let port: Int
    let bytes: [UInt8]

    /// Header fields the client writes itself; the request's own values for them are ignored.
    private static let framingFields: Set<String> = ["host", "content-length", "transfer-encoding", "connection",
                                                     "expect", "te", "upgrade", "keep-alive"]

    /// The head for `request` with a body of `bodyLength` bytes (`nil`: no body).
    init(_ request: URLRequest, bodyLength: Int64?) throws(HTTPFailure) {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let rawHost = components.host, !rawHost.isEmpty else {
            throw .badRequest("the request has no URL with a host")
        }
        let method = request.httpMethod ?? "GET"
        guard !method.isEmpty, method.utf8.allSatisfy(Self.isTokenByte) else {
            throw .badRequest("the method is not an HTTP token")
        }
        var host = rawHost
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? 80
        guard (1...65_535).contains(port) else { throw .badRequest("port \(port) is out of range") }
        var target = components.percentEncodedPath
        if target.isEmpty { target = "/" }
        if let query = components.percentEncodedQuery { target += "?" + query }
        guard target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .badRequest("the request target has a space or control character")
        }
        let hostField = (host.contains(":") ? "[\(host)]" : host) + (components.port.map { ":\($0)" } ?? "")
        var text = "\(method) \(target) HTTP/1.1\r\nHost: \(hostField)\r\n"
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .badRequest("a header field name is not an HTTP token")
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw .badRequest("the value of header field \(name) has a line break or control character")
            }
            if Self.framingFields.contains(name.lowercased()) { continue }
            text += "\(name): \(value)\r\n"
        }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "\r\n"
        self.method = method.uppercased()
        self.host = host
        self.port = port
        bytes = Array(text.utf8)
    }

    /// Whether the method is idempotent (RFC 9110 §9.2.2, RFC 4918): a request that may have
    /// reached the server can be sent again on a fresh connection when no byte of its answer came.
    var isIdempotent: Bool { ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PROPFIND", "PROPPATCH"].contains(method) }

    /// `tchar` of RFC 9110: the characters of a method or header field name.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            tokenPunctuation.contains(byte)
        }
    }

    /// The punctuation allowed in a token (made once: this is checked for every byte of every head).
    private static let tokenPunctuation: [UInt8] = Array("!#$%&'*+-.^_`|~".utf8)
}
