import FileCoordination
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP/1.1 client on plain sockets, for `http://` servers (loopback, or elsewhere when the
/// user opted in to insecure http): what ``WebDAVTransport`` uses instead of URLSession there.
/// URLSession costs about 1.5 ms of CPU per request on Linux (its curl handle, timers, operation
/// queue hops) and sends a file at a third of curl's speed; this client reuses keep-alive
/// connections and streams a file in 256 KiB pieces. TLS stays URLSession's job.
///
/// - **Connections**: a pool (``HTTPConnectionPool``) of up to 4 idle keep-alive connections per
///   server. A pooled connection the server closed or reset before any byte of the answer arrived
///   is dropped, and the request is sent once more on a fresh connection when nothing of it had
///   gone out, or its method is idempotent. An answer with `Connection: close` (or one read until
///   the server closes) is not pooled.
/// - **Requests**: the `URLRequest`'s method, URL and header fields as they are (the store sets
///   `Authorization` on every request; no challenge is ever answered), `Content-Length` for a body,
///   never `Expect: 100-continue`.
/// - **Answers**: see ``HTTPResponseReader``; the body goes to the exchange's sink piece by piece
///   (the exchange enforces its limits and may refuse, which ends the exchange and drops the
///   connection). Redirects are returned as they are.
/// - **Limits**: every wait is a `poll(2)` of at most the request's `timeoutInterval` (an idle
///   limit) and never past the exchange's deadline (``RemoteStoreError/timedOut``); a cancelled
///   calling task shuts the socket down (``RemoteStoreError/cancelled``). A malformed answer is
///   ``RemoteStoreError/malformedResponse(_:)``, a connection failure
///   ``RemoteStoreError/transport(_:)``; the connection is closed after any failure.
///
/// Threads: the socket work of each exchange runs on a thread of ``threads`` (never on the Swift
/// cooperative pool); the exchange's progress callbacks run there too. `Sendable`.
final class PlainHTTPClient: Sendable {
    let pool = HTTPConnectionPool()

    /// The threads exchanges run on: started at once, never queued behind a blocked one.
    static let threads = WaitingThreads(name: "SyncAgent.http")

    /// Sends `request` with `body` and returns the answer (any status), within `deadline` seconds
    /// in all. Throws as ``WebDAVTransport/send(_:body:exchange:)``.
    func send(_ request: URLRequest, body: WebDAVTransport.Body, exchange: WebDAVExchange,
              deadline: TimeInterval) async throws(RemoteStoreError) -> WebDAVResponse {
        let interruption = HTTPInterruption()
        let limits = HTTPWaitLimits(idleTimeout: request.timeoutInterval, overallDeadline: deadline, interruption: interruption)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<WebDAVResponse, RemoteStoreError>, Never>) in
                exchange.attach(continuation)
                if Task.isCancelled {
                    exchange.finish(.failure(.cancelled))
                    return
                }
                Self.threads.run { [self] in run(request, body: body, exchange: exchange, limits: limits) }
            }
        } onCancel: {
            exchange.finish(.failure(.cancelled))
            interruption.interrupt()
        }
        return try outcome.get()
    }

    /// The exchange, on a thread of ``threads``: ends `exchange` one way or the other.
    private func run(_ request: URLRequest, body: WebDAVTransport.Body, exchange: WebDAVExchange, limits: HTTPWaitLimits) {
        do {
            try perform(request, body: body, exchange: exchange, limits: limits)
            exchange.complete(error: nil)
        } catch {
            if let failure = error.remoteStoreError(description: exchange.description) { exchange.finish(.failure(failure)) }
        }
    }

    /// Sends the request (once more on a fresh connection when a pooled one turns out closed) and
    /// feeds the answer to `exchange`.
    private func perform(_ request: URLRequest, body: WebDAVTransport.Body, exchange: WebDAVExchange,
                         limits: HTTPWaitLimits) throws(HTTPFailure) {
        let requestBody = try HTTPRequestBody(body)
        let head = try HTTPRequestHead(request, bodyLength: requestBody.length ?? (["PUT", "POST"].contains(request.httpMethod) ? 0 : nil))
        var retried = false
        while true {
            let pooled = retried ? nil : pool.take("\(head.host):\(head.port)")
            let connection: HTTPConnection
            if let pooled {
                connection = pooled
            } else {
                connection = try HTTPConnection.open(host: head.host, port: head.port, limits: limits)
            }
            guard limits.interruption.use(connection) else {
                connection.close()
                throw .cancelled
            }
            var progress = AttemptProgress()
            do {
                let keepAlive = try exchangeOnce(head, requestBody, on: connection, exchange: exchange, limits: limits,
                                                 progress: &progress)
                _ = limits.interruption.use(nil)
                if keepAlive {
                    connection.exchanges += 1
                    pool.giveBack(connection)
                } else {
                    connection.close()
                }
                return
            } catch {
                _ = limits.interruption.use(nil)
                connection.close()
                if case .closedByServer = error, pooled != nil, !progress.answerStarted,
                   !progress.sentAnything || head.isIdempotent {
                    retried = true
                    continue
                }
                throw error
            }
        }
    }

    /// What one attempt got to: whether any byte of the request went out, any byte of an answer came.
    private struct AttemptProgress {
        var sentAnything = false
        var answerStarted = false
    }

    /// One request and its answer on `connection`. Returns whether the connection may carry another.
    private func exchangeOnce(_ head: HTTPRequestHead, _ body: HTTPRequestBody, on connection: HTTPConnection,
                              exchange: WebDAVExchange, limits: HTTPWaitLimits,
                              progress: inout AttemptProgress) throws(HTTPFailure) -> Bool {
        let sentBefore = connection.bytesSent
        defer { progress.sentAnything = connection.bytesSent > sentBefore }
        var writeOutcome = HTTPConnection.WriteOutcome.written
        var writeFailure: HTTPFailure?
        do {
            writeOutcome = try body.send(head: head.bytes, on: connection, limits: limits) { sent, total in exchange.sent(sent, of: total) }
        } catch {
            // A server that answers early (a refusal) and closes may have left its answer to read.
            guard case .closedByServer = error, connection.bytesSent > sentBefore + Int64(head.bytes.count) else { throw error }
            writeFailure = error
            writeOutcome = .answerArrived
        }
        let answer: HTTPResponseHead
        do {
            answer = try HTTPResponseReader.readHead(connection, limits: limits, answerStarted: &progress.answerStarted)
        } catch {
            throw writeFailure ?? error
        }
        let framing = try HTTPResponseReader.framing(of: answer, method: head.method)
        var expected: Int64?
        if case .length(let length) = framing { expected = Int64(exactly: length) }
        guard exchange.receive(status: answer.status, headers: answer.headers, expectedLength: expected) else { throw .refusedBySink }
        let end = try HTTPResponseReader.readBody(connection, framing: framing, limits: limits) { exchange.receive(bytes: $0) }
        guard end == .complete else { throw .refusedBySink }
        return writeOutcome == .written && HTTPResponseReader.keepsAlive(answer, framing: framing)
    }
}
