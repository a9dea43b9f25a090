import FileCoordination
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import Synchronization
import SystemSupport

/// The state of one request while it runs (a URLSession task, or an exchange of the plain-socket
/// ``PlainHTTPClient``): where its body goes (memory, bounded, or a local
/// file, streamed), its progress callbacks, and the one continuation that receives its outcome.
/// The first outcome wins (a completion, a failure found while reading, or a cancellation); later
/// ones are ignored, so the continuation is resumed exactly once.
///
/// Called from the session's delegate queue (serial) or the plain client's exchange thread, and,
/// for ``finish(_:)`` on cancellation, from the cancelling task's thread. Its state is behind a
/// `Locked` (a pthread mutex ThreadSanitizer sees).
final class WebDAVExchange: Sendable {
    /// Where the answer's body goes.
    enum Sink: Sendable {
        /// Collected in memory up to `limit` bytes; more fails the exchange with
        /// ``RemoteStoreError/malformedResponse(_:)`` and cancels the transfer.
        case memory(limit: Int)
        /// Streamed into the local file (created or truncated when a 2xx answer starts; nothing is
        /// created for another status). The start of an error answer (64 KiB) is kept in memory.
        /// A 2xx body longer than its `Content-Length`, or than the exchange's `maximumFileBytes`
        /// (the size the listing gave, when the caller passes it), fails the exchange with
        /// ``RemoteStoreError/malformedResponse(_:)`` before the excess is written: an endless
        /// chunked answer cannot fill the disk.
        case file(URL)
    }

    private struct State {
        var continuation: CheckedContinuation<Result<WebDAVResponse, RemoteStoreError>, Never>?
        var finished: Result<WebDAVResponse, RemoteStoreError>?
        var status = 0
        var headers: [String: String] = [:]
        var body = Data()
        var descriptor: Int32 = -1
        var received: Int64 = 0
        var expected: Int64?
        var createdLocalFile = false
    }

    let sink: Sink
    let description: String
    private let receiveProgress: (@Sendable (Int64, Int64?) -> Void)?
    private let sendProgress: (@Sendable (Int64, Int64) -> Void)?
    /// The most bytes a file body may have (`nil`: bounded only by `Content-Length` when given).
    let maximumFileBytes: Int64?
    /// The largest error body kept while streaming to a file.
    private static let errorBodyLimit = 64 * 1024
    private let state = Locked(State())

    init(sink: Sink, description: String, receiveProgress: (@Sendable (Int64, Int64?) -> Void)? = nil,
         sendProgress: (@Sendable (Int64, Int64) -> Void)? = nil, maximumFileBytes: Int64? = nil) {
        self.sink = sink
        self.maximumFileBytes = maximumFileBytes
        self.description = description
        self.receiveProgress = receiveProgress
        self.sendProgress = sendProgress
    }

    /// Sets the continuation that receives the outcome; resumes it at once when the exchange
    /// already finished (cancelled before it started).
    func attach(_ continuation: CheckedContinuation<Result<WebDAVResponse, RemoteStoreError>, Never>) {
        let early: Result<WebDAVResponse, RemoteStoreError>? = state.withLock { state in
            if let finished = state.finished { return finished }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Whether the exchange created (or truncated) its local file: a 2xx answer started.
    var createdLocalFile: Bool { state.withLock { $0.createdLocalFile } }

    /// The answer's header arrived (URLSession's form). Returns whether to go on receiving the body.
    func receive(_ response: URLResponse) -> Bool {
        guard let http = response as? HTTPURLResponse else {
            finish(.failure(.malformedResponse("\(description): not an HTTP answer")))
            return false
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
        }
        let expected = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
        return receive(status: http.statusCode, headers: headers, expectedLength: expected)
    }

    /// The answer's header arrived: its status, its header fields (names lowercased) and the body's
    /// announced length (`nil`: not announced, or chunked). Returns whether to go on receiving the
    /// body; `false` when the exchange ended (an announced length over a limit, the local file
    /// cannot be created, or it had already finished).
    func receive(status: Int, headers: [String: String], expectedLength expected: Int64?) -> Bool {
        let failure: RemoteStoreError? = state.withLock { state in
            guard state.finished == nil else { return .cancelled }
            state.status = status
            state.headers = headers
            state.expected = expected
            switch sink {
            case .memory(let limit):
                if let expected, expected > Int64(limit) {
                    return .malformedResponse("\(description): the answer (\(expected) bytes) is over the limit of \(limit) bytes")
                }
            case .file(let url):
                guard (200..<300).contains(status) else { return nil }
                if let expected, let maximum = maximumFileBytes, expected > maximum {
                    return .malformedResponse("\(description): the answer (\(expected) bytes) is larger than the \(maximum) bytes expected")
                }
                let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
                guard descriptor >= 0 else { return .localFile(url, errno: Errno(rawValue: errno)) }
                state.descriptor = descriptor
                state.createdLocalFile = true
            }
            return nil
        }
        if let failure {
            finish(.failure(failure))
            return false
        }
        return true
    }

    /// A piece of the body arrived (URLSession's form).
    func receive(_ data: Data) -> Bool {
        data.withUnsafeBytes { receive(bytes: $0) }
    }

    /// A piece of the body arrived; `bytes` is only read during the call. Returns whether to go on;
    /// `false` when the exchange ended (over a limit, a local write error, or already finished).
    func receive(bytes data: UnsafeRawBufferPointer) -> Bool {
        var progress: (Int64, Int64?)?
        let failure: RemoteStoreError? = state.withLock { state in
            guard state.finished == nil else { return .cancelled }
            if state.descriptor >= 0, case .file(let url) = sink {
                let total = state.received + Int64(data.count)
                if let expected = state.expected, total > expected {
                    return .malformedResponse("\(description): more bytes than the announced Content-Length of \(expected)")
                }
                if let maximum = maximumFileBytes, total > maximum {
                    return .malformedResponse("\(description): more than the \(maximum) bytes expected")
                }
                if let errno = Self.writeAll(data, to: state.descriptor) { return .localFile(url, errno: errno) }
                state.received += Int64(data.count)
                progress = (state.received, state.expected)
                return nil
            }
            let limit: Int
            switch sink {
            case .memory(let memoryLimit): limit = memoryLimit
            case .file: limit = Self.errorBodyLimit
            }
            guard state.body.count + data.count <= limit else {
                if case .file = sink { return nil }   // an error page: its start is enough
                return .malformedResponse("\(description): the answer is over the limit of \(limit) bytes")
            }
            state.body.append(contentsOf: data)
            state.received += Int64(data.count)
            return nil
        }
        if let failure {
            finish(.failure(failure))
            return false
        }
        if let progress { receiveProgress?(progress.0, progress.1) }
        return true
    }

    /// Bytes of the request body were sent.
    func sent(_ total: Int64, of expected: Int64) {
        guard state.withLock({ $0.finished == nil }) else { return }
        sendProgress?(total, expected)
    }

    /// The task completed (`error` nil) or failed.
    func complete(error: (any Error)?) {
        if let error {
            finish(.failure(WebDAVStatus.error(for: error)))
            return
        }
        let response: Result<WebDAVResponse, RemoteStoreError> = state.withLock { state in
            if state.status == 0 { return .failure(.malformedResponse("\(description): no HTTP answer")) }
            if state.descriptor >= 0, case .file(let url) = sink {
                if fsync(state.descriptor) != 0 { return .failure(.localFile(url, errno: Errno(rawValue: errno))) }
            }
            return .success(WebDAVResponse(status: state.status, headers: state.headers, body: state.body))
        }
        finish(response)
    }

    /// Ends the exchange with `outcome` unless it already ended; closes the local file and resumes
    /// the continuation.
    func finish(_ outcome: Result<WebDAVResponse, RemoteStoreError>) {
        let continuation: CheckedContinuation<Result<WebDAVResponse, RemoteStoreError>, Never>?
            = state.withLock { state in
                guard state.finished == nil else { return nil }
                state.finished = outcome
                if state.descriptor >= 0 {
                    close(state.descriptor)
                    state.descriptor = -1
                }
                state.body = Data()
                defer { state.continuation = nil }
                return state.continuation
            }
        continuation?.resume(returning: outcome)
    }

    /// Writes all of `data` to `descriptor`; the errno on failure (`ENOSPC`, `EIO`, …).
    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Errno? {
        do throws(SystemCallError) {
            try FileDescriptor(rawValue: descriptor, path: "").writeAll(buffer)
            return nil
        } catch {
            return error.errno
        }
    }
}
