import FileCoordination
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The HTTP side of a ``WebDAVStore``, chosen by the URL's scheme in ``send(_:body:exchange:)``:
/// `http` goes through the plain-socket ``PlainHTTPClient`` (keep-alive connections, files sent in
/// large pieces), `https` through FoundationNetworking's `URLSession` (``URLSessionTransport``,
/// made on first use), which verifies TLS.
///
/// Both apply the same two limits to every request: the idle timeout (`requestTimeout`: no byte
/// moved for that long) and an overall deadline per exchange (`exchangeDeadline` for listings and
/// other small requests, `transferDeadline` for a file streamed in or out), after which the
/// exchange fails with ``RemoteStoreError/timedOut``, so a server trickling a byte now and then
/// cannot hold a request forever. Neither follows redirects or answers authentication challenges:
/// the store sets `Authorization` itself.
final class WebDAVTransport: Sendable {
    private let requestTimeout: TimeInterval
    private let exchangeDeadline: TimeInterval
    private let transferDeadline: TimeInterval
    private let plain = PlainHTTPClient()
    private let secure = Locked<URLSessionTransport?>(nil)

    init(requestTimeout: TimeInterval,
         exchangeDeadline: TimeInterval = WebDAVConfiguration.defaultExchangeDeadline,
         transferDeadline: TimeInterval = WebDAVConfiguration.defaultTransferDeadline) {
        self.requestTimeout = requestTimeout
        self.exchangeDeadline = max(exchangeDeadline, 0.001)
        self.transferDeadline = max(transferDeadline, 0.001)
    }

    /// What a request sends.
    enum Body: Sendable {
        case none
        case data(Data)
        /// Streamed from the local file (read in pieces, never whole in memory).
        case file(URL)
    }

    /// Sends `request` and returns the answer (any status). Throws ``RemoteStoreError/timedOut``,
    /// ``RemoteStoreError/transport(_:)``, ``RemoteStoreError/malformedResponse(_:)`` (an answer
    /// that is not HTTP), ``RemoteStoreError/cancelled`` (when the calling task is cancelled), or
    /// what the exchange's sink found (an answer over the limit, a local write error). Fails with
    /// ``RemoteStoreError/timedOut`` once the exchange's overall deadline passes
    /// (``transferDeadline`` when a file is streamed in or out, else ``exchangeDeadline``).
    func send(_ request: URLRequest, body: Body, exchange: WebDAVExchange) async throws(RemoteStoreError) -> WebDAVResponse {
        var isTransfer = false
        if case .file = body { isTransfer = true }
        if case .file = exchange.sink { isTransfer = true }
        let deadline = isTransfer ? transferDeadline : exchangeDeadline
        if request.url?.scheme?.lowercased() == "http" {
            return try await plain.send(request, body: body, exchange: exchange, deadline: deadline)
        }
        return try await secureTransport().send(request, body: body, exchange: exchange, deadline: deadline)
    }

    /// Sends small requests with their bodies in memory and returns what `handle` made of each
    /// answer (status, header fields, body of at most `maximumBody` bytes), in the order of
    /// `requests`. Over `http`, all at once on one connection from one thread
    /// (``PlainHTTPClient/sendPipelined(_:deadline:maximumBody:handle:)``; only idempotent
    /// methods); over `https`, one ``send(_:body:exchange:)`` after the other. `handle` runs on a
    /// thread of the transport. Throws as ``send(_:body:exchange:)``, for the first request that
    /// fails; a status is never a failure here.
    func sendAll<Answer: Sendable>(_ requests: [PreparedRequest], maximumBody: Int,
                                   handle: @escaping @Sendable (Int, WebDAVResponse) -> Answer) async throws(RemoteStoreError) -> [Answer] {
        guard let first = requests.first?.request.url else { return [] }
        if first.scheme?.lowercased() == "http", requests.allSatisfy({ $0.request.url?.scheme?.lowercased() == "http" }) {
            return try await plain.sendPipelined(requests, deadline: exchangeDeadline, maximumBody: maximumBody, handle: handle)
        }
        var answers: [Answer] = []
        for (index, prepared) in requests.enumerated() {
            let request = prepared.request
            let exchange = WebDAVExchange(sink: .memory(limit: maximumBody), description: "\(request.httpMethod ?? "GET") \(request.url?.path ?? "")")
            answers.append(handle(index, try await send(request, body: .data(prepared.body), exchange: exchange)))
        }
        return answers
    }

    private func secureTransport() -> URLSessionTransport {
        secure.withLock { transport in
            if let transport { return transport }
            let made = URLSessionTransport(requestTimeout: requestTimeout, resourceTimeout: max(exchangeDeadline, transferDeadline))
            transport = made
            return made
        }
    }
}
