import FileCoordination
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The `https` side of a ``WebDAVTransport``: one ephemeral `URLSession` (no cookies, no cache, no
/// credential store; TLS verified as URLSession does by default; redirects not followed, so an
/// `Authorization` header never goes to another URL) whose delegate routes each task's events to
/// its ``WebDAVExchange``.
///
/// Two limits bound every request: the session's idle timeout (`requestTimeout`: no byte moved for
/// that long) and the overall deadline the caller passes, after which the exchange fails with
/// ``RemoteStoreError/timedOut`` and its task is cancelled, so a server trickling a byte now and
/// then cannot hold a request forever.
final class URLSessionTransport: Sendable {
    private let session: URLSession
    private let router: WebDAVTaskRouter

    /// `resourceTimeout`: the session's backstop (the longest of the store's deadlines).
    init(requestTimeout: TimeInterval, resourceTimeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = requestTimeout
        // A backstop only: each exchange has its own deadline (below).
        configuration.timeoutIntervalForResource = resourceTimeout
        router = WebDAVTaskRouter()
        let queue = OperationQueue()
        queue.name = "clouddocsd.webdav"
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    deinit { session.invalidateAndCancel() }

    /// Sends `request` and returns the answer, as ``WebDAVTransport/send(_:body:exchange:)``,
    /// failing with ``RemoteStoreError/timedOut`` once `deadline` seconds passed.
    func send(_ request: URLRequest, body: WebDAVTransport.Body, exchange: WebDAVExchange,
              deadline: TimeInterval) async throws(RemoteStoreError) -> WebDAVResponse {
        let task: URLSessionTask
        switch body {
        case .none: task = session.dataTask(with: request)
        case .data(let data): task = session.uploadTask(with: request, from: data)
        case .file(let url): task = session.uploadTask(with: request, fromFile: url)
        }
        router.register(exchange, for: task.taskIdentifier)
        defer { router.unregister(task.taskIdentifier) }
        // The overall deadline: ends the exchange (the first outcome wins) and cancels the task.
        let watchdog = Task {
            guard (try? await Task.sleep(for: .seconds(deadline))) != nil else { return }
            exchange.finish(.failure(.timedOut))
            task.cancel()
        }
        defer { watchdog.cancel() }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<WebDAVResponse, RemoteStoreError>, Never>) in
                exchange.attach(continuation)
                if Task.isCancelled { exchange.finish(.failure(.cancelled)) } else { task.resume() }
            }
        } onCancel: {
            exchange.finish(.failure(.cancelled))
            task.cancel()
        }
        if case .failure = outcome { task.cancel() }
        return try outcome.get()
    }
}

/// The session delegate: routes each task's events to its exchange by task identifier. Its table
/// is behind a `Locked` (a pthread mutex ThreadSanitizer sees); events arrive on the session's serial delegate queue.
final class WebDAVTaskRouter: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Locked<[Int: WebDAVExchange]>([:])

    func register(_ exchange: WebDAVExchange, for identifier: Int) { exchanges.withLock { $0[identifier] = exchange } }
    func unregister(_ identifier: Int) { _ = exchanges.withLock { $0.removeValue(forKey: identifier) } }
    private func exchange(_ task: URLSessionTask) -> WebDAVExchange? { exchanges.withLock { $0[task.taskIdentifier] } }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let goOn = exchange(dataTask)?.receive(response) ?? false
        completionHandler(goOn ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if exchange(dataTask)?.receive(data) != true { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        exchange(task)?.sent(totalBytesSent, of: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange(task)?.complete(error: error)
    }

    /// Redirects are not followed: the 3xx answer is returned as it is (and is an unexpected
    /// status for every operation), so credentials never follow a redirect elsewhere.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
