import FileCoordination
import Foundation

/// Why a ``RemoteStore`` call failed. Every server answer the agent does not expect maps to one of
/// these; none traps.
public enum RemoteStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The item or its parent folder is missing (404, 409 for a missing parent).
    case notFound(RemotePath)
    /// The write's condition did not hold (412): someone else changed the item.
    case preconditionFailed(RemotePath)
    /// The server refused the credentials (401, 403).
    case unauthorized(status: Int)
    /// The server is unavailable or failing (5xx, 429); worth retrying after a back-off.
    /// `retryAfter` is the server's `Retry-After` in seconds, when given.
    case unavailable(status: Int, retryAfter: Double?)
    /// The server answered with a status this operation does not expect.
    case unexpectedStatus(Int, method: String, path: RemotePath)
    /// No answer within the request timeout.
    case timedOut
    /// The connection failed (refused, reset, DNS, TLS): offline or server down.
    case transport(String)
    /// A name or `href` from the server leaves the root (`..`, absolute elsewhere, encoded `/`).
    case escapingPath(String)
    /// The server's answer could not be read (malformed or over the size limit).
    case malformedResponse(String)
    /// A local file could not be read or written (the errno, when known).
    case localFile(URL, errno: Errno?)
    /// The call was cancelled.
    case cancelled
    /// The configuration refuses this server (plain `http` to a non-loopback host, …).
    case refused(String)

    /// Whether retrying later may succeed (server errors, timeouts, connection failures).
    public var isTransient: Bool {
        switch self {
        case .unavailable, .timedOut, .transport: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .notFound(let path): "not found on the server: /\(path)"
        case .preconditionFailed(let path): "changed on the server meanwhile: /\(path)"
        case .unauthorized(let status): "the server refused the credentials (HTTP \(status))"
        case .unavailable(let status, _): "the server is unavailable (HTTP \(status))"
        case .unexpectedStatus(let status, let method, let path): "unexpected HTTP \(status) for \(method) /\(path)"
        case .timedOut: "the server did not answer in time"
        case .transport(let reason): "cannot reach the server: \(reason)"
        case .escapingPath(let href): "the server named an item outside the folder: \(href)"
        case .malformedResponse(let reason): "unreadable server answer: \(reason)"
        case .localFile(let url, let errno): "local file \(url.path): " + (errno.map(\.message) ?? "failed")
        case .cancelled: "cancelled"
        case .refused(let reason): reason
        }
    }
}
