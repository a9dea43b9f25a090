import FileCoordination
import Foundation
import Glibc
import TestSupport

/// A loopback HTTP server for the plain client's tests whose answers are raw bytes written by the
/// test: chunked bodies, cut or lying bodies, header floods, trickles, connections closed between
/// requests — what ``WebDAVScriptedServer`` (one request per connection, always a well-formed
/// answer) cannot say. Connections are served one at a time, each for as many requests as the
/// script keeps it open; every request head is logged with the number of its connection.
///
/// ``stop()`` closes the listener and the connection being served, and waits (bounded) for the
/// server's thread.
final class RawHTTPServer: Sendable {
    /// What to do with one request.
    enum Action: Sendable {
        /// Send these bytes, then read the next request on the same connection.
        case answer(Data)
        /// Send these bytes, then close the connection.
        case answerAndClose(Data)
        /// Close the connection without answering.
        case close
        /// Send the bytes, then one byte of `filler` every `interval` until the client leaves.
        case trickle(Data, interval: Duration)
    }

    /// One request as received.
    struct Request: Sendable {
        let connection: Int
        let head: String
        let body: Data
        var requestLine: String { String(head.split(separator: "\r\n").first ?? "") }
    }

    let port: UInt16
    private let listener: Int32
    private let finished = DispatchSemaphore(value: 0)
    private let state = RawServerState()

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/dav/")! }
    var requests: [Request] { state.log.withLock { $0 } }
    /// How many connections carried requests.
    var connections: Int { state.log.withLock { Set($0.map(\.connection)).count } }

    /// Starts serving; `script` is called on the server's thread with each request (and the index
    /// of the request, from 0) and says what to do.
    init(_ script: @escaping @Sendable (_ request: Request, _ index: Int) -> Action) throws {
        let (fd, port) = try LoopbackListener.open()
        listener = fd
        self.port = port
        let finished = self.finished, state = self.state
        Thread.detachNewThread {
            defer { finished.signal() }
            var connectionNumber = 0
            while true {
                let connection = accept(fd, nil, nil)
                if connection < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                state.current.withLock { $0 = connection }
                Self.serve(connection, number: connectionNumber, script: script, state: state)
                state.current.withLock { $0 = -1 }
                close(connection)
                connectionNumber += 1
            }
        }
    }

    deinit { stop() }

    /// Stops; idempotent.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        state.current.withLock { if $0 >= 0 { shutdown($0, Int32(SHUT_RDWR)) } }
        if finished.wait(timeout: Polling.deadline()) == .success { finished.signal() }
    }

    private static func serve(_ connection: Int32, number: Int, script: (Request, Int) -> Action, state: RawServerState) {
        var time = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var incoming: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            var headEnd: Int?
            while true {
                if let end = find(separator, in: incoming) {
                    headEnd = end
                    break
                }
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                incoming += buffer[..<count]
            }
            guard let end = headEnd else { return }
            let head = String(decoding: incoming[..<end], as: UTF8.self)
            let contentLength = head.split(separator: "\r\n").compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
            incoming.removeFirst(end + 4)
            while incoming.count < contentLength {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                incoming += buffer[..<count]
            }
            let request = Request(connection: number, head: head, body: Data(incoming[..<contentLength]))
            incoming.removeFirst(contentLength)
            let index = state.log.withLock { log in
                log.append(request)
                return log.count - 1
            }
            switch script(request, index) {
            case .answer(let bytes):
                guard sendAll(connection, bytes) else { return }
            case .answerAndClose(let bytes):
                _ = sendAll(connection, bytes)
                return
            case .close:
                return
            case .trickle(let bytes, let interval):
                guard sendAll(connection, bytes) else { return }
                while sendAll(connection, Data("x".utf8)) {
                    let nanoseconds = interval.components.attoseconds / 1_000_000_000 + interval.components.seconds * 1_000_000_000
                    var pause = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
                    nanosleep(&pause, nil)   // the server's pace, not a synchronisation of the test
                }
                return
            }
        }
    }

    private static func find(_ separator: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= separator.count else { return nil }
        for index in 0...(bytes.count - separator.count) where bytes[index..<(index + separator.count)].elementsEqual(separator) {
            return index
        }
        return nil
    }

    private static func sendAll(_ connection: Int32, _ data: Data) -> Bool {
        LoopbackListener.sendAll(connection, data)
    }

    // MARK: Answers

    /// A complete answer with `Content-Length`, kept alive unless `close`.
    static func reply(_ status: Int, _ body: String = "", headers: [String: String] = [:], close: Bool = false) -> Data {
        var text = "HTTP/1.1 \(status) Raw\r\nContent-Length: \(body.utf8.count)\r\n"
        if close { text += "Connection: close\r\n" }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        return Data((text + "\r\n" + body).utf8)
    }

    /// A `207` listing of the folder `/dav/` with one file `name` (tag `"t"`).
    static func listing(_ name: String = "a.txt") -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:">
        <D:response><D:href>/dav/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>\
        <D:getetag>"root"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        <D:response><D:href>/dav/\(name)</D:href><D:propstat><D:prop><D:resourcetype/><D:getetag>"t"</D:getetag>\
        <D:getcontentlength>3</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        </D:multistatus>
        """
    }

    /// `body` in chunks of `size` bytes, with a chunk extension on the first and a trailer field.
    static func chunked(_ body: String, size: Int, status: Int = 207) -> Data {
        var text = "HTTP/1.1 \(status) Raw\r\nTransfer-Encoding: chunked\r\nContent-Type: application/xml\r\n\r\n"
        let bytes = Array(body.utf8)
        var offset = 0
        var first = true
        while offset < bytes.count {
            let piece = bytes[offset..<min(offset + size, bytes.count)]
            text += String(piece.count, radix: 16) + (first ? ";name=value" : "") + "\r\n"
            text += String(decoding: piece, as: UTF8.self) + "\r\n"
            offset += piece.count
            first = false
        }
        text += "0\r\nX-Trailer: yes\r\n\r\n"
        return Data(text.utf8)
    }
}

/// What a ``RawHTTPServer`` shares with its thread, each behind its own `Locked`: the requests
/// received and the connection being served (so that `stop()` can shut it down).
final class RawServerState: Sendable {
    let log = Locked<[RawHTTPServer.Request]>([])
    let current = Locked<Int32>(-1)
}
