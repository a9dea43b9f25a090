import FileCoordination
import Foundation
import Glibc

/// A tiny HTTP/1.1 server on `127.0.0.1` whose answers a test writes by hand: hostile or broken
/// WebDAV answers (escaping `href`s, malformed XML, an endless body) that no real server gives.
/// One connection at a time, one request per connection (`Connection: close`); the request body is
/// read (by `Content-Length`) and dropped.
///
/// ``stop()`` closes the listening socket and waits (bounded) for the accept thread to end.
public final class WebDAVScriptedServer: Sendable {
    /// What to answer to one request.
    public enum Answer: Sendable {
        /// A complete answer with this status, header fields and body (`Content-Length` added).
        case reply(status: Int, headers: [String: String], body: Data)
        /// A `207` header announcing no length, then `chunk` again and again until the client
        /// hangs up (or `limit` bytes were sent): an enormous answer.
        case endless(chunk: Data, limit: Int)
        /// Nothing at all: the connection stays open until the client leaves (a hung server).
        case silence
    }

    public let port: UInt16
    private let listener: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let requests = RequestLog()

    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    /// The request lines received so far (`PROPFIND /dav/ HTTP/1.1`).
    public var requestLines: [String] { requests.lines.withLock { $0 } }

    /// Starts listening; `answer` is called with the method and the raw request target of each
    /// request, on the server's thread.
    public init(_ answer: @escaping @Sendable (_ method: String, _ target: String) -> Answer) throws {
        let (fd, port) = try LoopbackListener.open()
        listener = fd
        self.port = port
        let finished = self.finished, requests = self.requests
        Thread.detachNewThread {
            defer { finished.signal() }
            while true {
                let connection = accept(fd, nil, nil)
                if connection < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                Self.serve(connection, answer: answer, requests: requests)
                close(connection)
            }
        }
    }

    deinit { stop() }

    /// Stops accepting and waits (at most the polling hang guard) for the accept thread to end.
    /// Idempotent.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        if finished.wait(timeout: Polling.deadline()) == .success { finished.signal() }
    }

    private static func serve(_ connection: Int32, answer: @Sendable (String, String) -> Answer,
                              requests: RequestLog) {
        var time = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var incoming: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            incoming += buffer[..<count]
            headerEnd = incoming.indices.first { incoming[$0...].starts(with: separator) }
            if incoming.count > 1 << 20 { return }
        }
        guard let end = headerEnd else { return }
        let head = String(decoding: incoming[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n").map(String.init)
        let requestLine = lines.first ?? ""
        requests.lines.withLock { $0.append(requestLine) }
        let fields = requestLine.split(separator: " ").map(String.init)
        guard fields.count >= 2 else { return }
        let contentLength = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        var bodyRead = incoming.count - (end + 4)
        while bodyRead < contentLength {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            bodyRead += count
        }
        switch answer(fields[0], fields[1]) {
        case .reply(let status, let headers, let body):
            var text = "HTTP/1.1 \(status) Scripted\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
            text += "\r\n"
            _ = sendAll(connection, Data(text.utf8) + body)
        case .endless(let chunk, let limit):
            let text = "HTTP/1.1 207 Multi-Status\r\nConnection: close\r\nContent-Type: application/xml\r\n\r\n"
            guard sendAll(connection, Data(text.utf8)) else { return }
            var sent = 0
            while sent < limit, sendAll(connection, chunk) { sent += chunk.count }
        case .silence:
            // Until the client hangs up (or the 30 s receive timeout: then the thread moves on).
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
            }
        }
    }

    private static func sendAll(_ connection: Int32, _ data: Data) -> Bool {
        LoopbackListener.sendAll(connection, data)
    }
}

/// The request lines a ``WebDAVScriptedServer`` received, shared with its thread (behind a `Locked`).
private final class RequestLog: Sendable {
    let lines = Locked<[String]>([])
}
