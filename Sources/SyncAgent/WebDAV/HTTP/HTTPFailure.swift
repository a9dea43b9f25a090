import Foundation
import SystemSupport

/// Why one plain-socket HTTP exchange failed, before it becomes a ``RemoteStoreError``.
///
/// Kept apart from ``RemoteStoreError`` so that the client can tell a connection that went stale
/// while it sat in the pool (``closedByServer``: the request may be retried once on a fresh
/// connection) from a failure that ends the exchange.
enum HTTPFailure: Error, Equatable {
    /// The idle timeout (no byte moved) or the exchange's overall deadline passed.
    case timedOut
    /// The calling task was cancelled (the connection was shut down under the client's feet).
    case cancelled
    /// The server closed or reset the connection before any byte of an answer arrived.
    case closedByServer(String)
    /// A connection-level failure: refused, reset mid-answer, cut mid-body.
    case transport(String)
    /// The answer is not valid HTTP/1.1 (status line, header fields, framing, chunk sizes).
    case malformed(String)
    /// The request cannot be written as it is (a line break in a header value, no host).
    case badRequest(String)
    /// The local file of a request body failed (read error, shrank while being sent).
    case localFile(Errno?, String)
    /// The exchange's sink refused the answer (over a limit, local write error); the exchange
    /// already holds its failure.
    case refusedBySink

    /// The failure for `errno` after the system call `call`: a reset or a broken pipe is the
    /// server closing the connection.
    static func system(_ call: String, _ errno: Errno) -> HTTPFailure {
        .transport("\(call): \(errno.message)")
    }

    /// The ``RemoteStoreError`` this failure is for the store (nil for ``refusedBySink``, whose
    /// error the exchange already has).
    func remoteStoreError(description: String) -> RemoteStoreError? {
        switch self {
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .closedByServer(let reason): .transport("\(description): \(reason)")
        case .transport(let reason): .transport("\(description): \(reason)")
        case .malformed(let reason): .malformedResponse("\(description): \(reason)")
        case .badRequest(let reason): .refused("\(description): \(reason)")
        case .localFile(let errno, let path): .localFile(URL(fileURLWithPath: path), errno: errno)
        case .refusedBySink: nil
        }
    }
}
