import FileCoordination
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc

/// Many small requests in one go (the folder listings of a poll): one thread, one keep-alive
/// connection, up to ``pipelineWindow`` requests outstanding on it (HTTP/1.1 pipelining: the
/// server answers them in order), and the answers read in gulps (``HTTPConnection/gatherNanoseconds``)
/// rather than a wake-up per piece the server writes. A poll of 101 folders then costs one
/// thread hand-off instead of three per request, and a few dozen wake-ups instead of hundreds.
///
/// A connection the server closes (its keep-alive limit: Apache answers 100 requests on one
/// connection, then says `Connection: close`) or resets before an answer began has its
/// unanswered requests sent again on a fresh one — only idempotent requests are sent this way
/// (PROPFIND). Each answer must come within the idle timeout and the deadline, counted from the
/// answer before it; a body over `maximumBody` bytes, a malformed answer or a connection failure
/// that is not a clean close ends the whole call.
extension PlainHTTPClient {
    /// The most requests outstanding on the connection at once (a few hundred bytes each): the
    /// server always has the next one, and few are sent again when it closes the connection.
    static let pipelineWindow = 8
    /// How long the reading thread lets answers pile up in the socket before reading them.
    static let gatherNanoseconds: UInt64 = 8_000_000
    /// The room made for each answer's body before it arrives.
    static let initialBodyCapacity = 64 * 1024
    /// How many fresh connections in a row may fail before any answer (then the call fails).
    static let maximumFruitlessConnections = 3

    /// Sends `requests` (each with its whole body in memory) and calls `handle` with each answer,
    /// on the client's thread, in the order of `requests`; returns what `handle` returned, in that
    /// order. `deadline`: seconds allowed for each answer. Throws like
    /// ``WebDAVTransport/send(_:body:exchange:)``.
    func sendPipelined<Answer: Sendable>(_ requests: [PreparedRequest], deadline: TimeInterval,
                                         maximumBody: Int,
                                         handle: @escaping @Sendable (Int, WebDAVResponse) -> Answer) async throws(RemoteStoreError) -> [Answer] {
        guard !requests.isEmpty else { return [] }
        let interruption = HTTPInterruption()
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[Answer], RemoteStoreError>, Never>) in
                guard !Task.isCancelled else {
                    continuation.resume(returning: .failure(.cancelled))
                    return
                }
                Self.threads.run { [self] in
                    let result: Result<[Answer], RemoteStoreError>
                    do throws(HTTPFailure) {
                        result = .success(try runPipeline(requests, deadline: deadline, maximumBody: maximumBody,
                                                          interruption: interruption, handle: handle))
                    } catch {
                        result = .failure(error.remoteStoreError(description: "PROPFIND (\(requests.count) requests)")
                                          ?? .malformedResponse("an answer was refused"))
                    }
                    continuation.resume(returning: result)
                }
            }
        } onCancel: {
            interruption.interrupt()
        }
        return try outcome.get()
    }

    /// The pipeline, on a thread of ``threads``.
    private func runPipeline<Answer>(_ requests: [PreparedRequest], deadline: TimeInterval, maximumBody: Int,
                                     interruption: HTTPInterruption,
                                     handle: (Int, WebDAVResponse) -> Answer) throws(HTTPFailure) -> [Answer] {
        var wire: [[UInt8]] = []
        var host = "", port = 0, timeout: TimeInterval = 60
        for prepared in requests {
            let form = try prepared.wireForm()
            // PROPFIND only: its answers always carry a body framed by their headers (a HEAD
            // answer's `Content-Length` would swallow the next answers), and it is safe to resend.
            guard form.isIdempotent, prepared.request.httpMethod == "PROPFIND" else {
                throw .badRequest("\(prepared.request.httpMethod ?? "GET") cannot be pipelined: only PROPFIND is")
            }
            if wire.isEmpty {
                (host, port, timeout) = (form.host, form.port, prepared.request.timeoutInterval)
            } else if form.host != host || form.port != port {
                throw .badRequest("pipelined requests go to one server")
            }
            wire.append(form.bytes)
        }
        var answers: [Answer?] = Array(repeating: nil, count: requests.count)
        var toSend = Array(requests.indices)[...]
        var outstanding: [Int] = []
        var connection: HTTPConnection?
        var fruitless = 0
        defer {
            _ = interruption.use(nil)
            connection?.close()
        }
        var done = 0
        while done < requests.count {
            // Each answer has its own limits, counted from the end of the one before.
            let limits = HTTPWaitLimits(idleTimeout: timeout, overallDeadline: deadline, interruption: interruption)
            if connection == nil {
                let pooled = fruitless == 0 ? pool.take("\(host):\(port)") : nil
                let fresh: HTTPConnection
                if let pooled { fresh = pooled } else { fresh = try HTTPConnection.open(host: host, port: port, limits: limits) }
                guard interruption.use(fresh) else {
                    fresh.close()
                    throw .cancelled
                }
                fresh.gatherNanoseconds = requests.count > 1 ? Self.gatherNanoseconds : 0  // one answer: nothing to gather
                connection = fresh
            }
            guard let current = connection else { continue }
            do throws(HTTPFailure) {
                // Refilled only when at most one answer is outstanding, in one write: a system
                // call per few answers rather than one per request.
                if outstanding.count <= 1, !toSend.isEmpty {
                    let batch = Array(toSend.prefix(Self.pipelineWindow - outstanding.count))
                    guard try current.write(batch.flatMap { wire[$0] }, limits: limits) == .written else {
                        throw HTTPFailure.closedByServer("the server answered before the requests were sent")
                    }
                    toSend.removeFirst(batch.count)
                    outstanding += batch
                }
                var started = false
                let head = try HTTPResponseReader.readHead(current, limits: limits, answerStarted: &started)
                guard !outstanding.isEmpty else { throw HTTPFailure.malformed("an answer to no request") }
                let index = outstanding.removeFirst()
                let framing = try HTTPResponseReader.framing(of: head, method: "PROPFIND")
                if case .length(let length) = framing, length > UInt64(maximumBody) {
                    throw HTTPFailure.malformed("the answer (\(length) bytes) is over the limit of \(maximumBody) bytes")
                }
                // A listing's answer is tens of KiB: room for it at once, not grown piece by piece.
                var body = Data(capacity: Self.initialBodyCapacity)
                var over = false
                let end = try HTTPResponseReader.readBody(current, framing: framing, limits: limits) { piece in
                    guard body.count + piece.count <= maximumBody else {
                        over = true
                        return false
                    }
                    body.append(contentsOf: piece)
                    return true
                }
                if over || end != .complete { throw HTTPFailure.malformed("the answer is over the limit of \(maximumBody) bytes") }
                answers[index] = handle(index, WebDAVResponse(status: head.status, headers: head.headers, body: body))
                done += 1
                fruitless = 0
                if !HTTPResponseReader.keepsAlive(head, framing: framing) {
                    // The server ends the connection here: what it did not answer goes again.
                    toSend = (outstanding + toSend)[...]
                    outstanding = []
                    _ = interruption.use(nil)
                    current.close()
                    connection = nil
                }
            } catch {
                _ = interruption.use(nil)
                current.close()
                connection = nil
                guard case .closedByServer = error else { throw error }
                // Closed before this answer began (a stale pooled connection, a keep-alive limit):
                // the unanswered requests go again on a fresh connection.
                fruitless += 1
                guard fruitless <= Self.maximumFruitlessConnections else { throw error }
                toSend = (outstanding + toSend)[...]
                outstanding = []
            }
        }
        if let current = connection, outstanding.isEmpty, interruption.use(nil) {
            current.gatherNanoseconds = 0
            current.exchanges += done
            pool.giveBack(current)
            connection = nil
        }
        return answers.compactMap { $0 }
    }
}

/// A request with its whole body in memory, and — for a plain `http` URL — the bytes that go on
/// the wire (head and body), made once: a store that sends the same request at every poll keeps
/// it and saves building the `URLRequest` and its head each time. Immutable; `Sendable`.
struct PreparedRequest: Sendable {
    /// What goes on the wire for a plain-http request.
    struct WireForm: Sendable {
        let bytes: [UInt8]
        let host: String
        let port: Int
        let isIdempotent: Bool
    }

    let request: URLRequest
    let body: Data
    private let wire: Result<WireForm, HTTPFailure>?

    init(_ request: URLRequest, body: Data) {
        self.request = request
        self.body = body
        if request.url?.scheme?.lowercased() == "http" {
            wire = Result { () throws(HTTPFailure) -> WireForm in
                let head = try HTTPRequestHead(request, bodyLength: Int64(body.count))
                return WireForm(bytes: head.bytes + body, host: head.host, port: head.port, isIdempotent: head.isIdempotent)
            }
        } else {
            wire = nil
        }
    }

    /// The wire form; ``HTTPFailure/badRequest(_:)`` when the request cannot be written as it is
    /// or is not plain `http`.
    func wireForm() throws(HTTPFailure) -> WireForm {
        guard let wire else { throw .badRequest("only plain http requests are sent by this client") }
        return try wire.get()
    }
}
