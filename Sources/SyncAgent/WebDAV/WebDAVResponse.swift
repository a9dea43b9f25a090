import Foundation

/// A server's answer to one request: the status, the header fields (names lowercased) and the body
/// when it was collected in memory (bounded; empty for a streamed download).
struct WebDAVResponse: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    /// The header field `name` (any case), or `nil`.
    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The `ETag` header as a tag, when present and non-empty.
    var tag: RemoteTag? { header("etag").flatMap(RemoteTag.init(parsing:)) }

    var isSuccess: Bool { (200..<300).contains(status) }
}
