import FileCoordination
import Foundation
import SyncAgent
import Testing
import TestSupport

// The plain-socket HTTP/1.1 client the WebDAV store uses for `http://` servers, against a raw
// loopback server whose answers the tests write byte by byte: keep-alive, chunked bodies, cut and
// lying bodies, header floods, garbage, trickles, connections closed between requests. Every bad
// answer must end as a typed error, and the next request must still work.

@Suite("Plain HTTP client: keep-alive, framing and hostile answers", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct PlainHTTPClientTests {
    static func store(_ server: RawHTTPServer, timeout: TimeInterval = 60,
                      exchangeDeadline: TimeInterval = WebDAVConfiguration.defaultExchangeDeadline,
                      user: String? = nil, password: String? = nil) throws -> WebDAVStore {
        try WebDAVStore(configuration: WebDAVConfiguration(baseURL: server.baseURL, user: user, password: password,
                                                           requestTimeout: timeout, exchangeDeadline: exchangeDeadline))
    }

    static let listingAnswer = RawHTTPServer.reply(207, RawHTTPServer.listing(), headers: ["Content-Type": "application/xml"])

    @Test("requests share one keep-alive connection; the head has Host and Content-Length, no Expect")
    func keepAlive() async throws {
        let server = try RawHTTPServer { _, _ in .answer(Self.listingAnswer) }
        defer { server.stop() }
        let store = try Self.store(server)
        for _ in 0..<5 { #expect(try await store.list(.root).map(\.path.description) == ["a.txt"]) }
        #expect(server.requests.count == 5)
        #expect(server.connections == 1)
        let head = try #require(server.requests.first?.head)
        #expect(head.hasPrefix("PROPFIND /dav/ HTTP/1.1\r\n"))
        #expect(head.contains("\r\nHost: 127.0.0.1:\(server.port)\r\n") && head.contains("\r\nDepth: 1\r\n"))
        #expect((head + "\r\n").contains("\r\nContent-Length: \(server.requests[0].body.count)\r\n") && !server.requests[0].body.isEmpty)
        #expect(!head.lowercased().contains("expect:") && !head.lowercased().contains("transfer-encoding"))
    }

    @Test("a chunked listing and a chunked download are decoded, and the connection is kept")
    func chunkedAnswers() async throws {
        let contents = String(repeating: "0123456789abcdef", count: 5_000)
        let server = try RawHTTPServer { request, _ in
            request.requestLine.hasPrefix("GET")
                ? .answer(RawHTTPServer.chunked(contents, size: 4_000, status: 200))
                : .answer(RawHTTPServer.chunked(RawHTTPServer.listing(), size: 7))
        }
        defer { server.stop() }
        let store = try Self.store(server)
        let scratch = try Scratch("plain-http-chunked")
        defer { scratch.remove() }
        #expect(try await store.list(.root).map(\.path.description) == ["a.txt"])
        #expect(try await WebDAVTesting.get(store, try WebDAVTesting.path("a.txt"), in: scratch) == contents)
        #expect(try await store.list(.root).count == 1)
        #expect(server.connections == 1)
    }

    @Test("an answer cut in the middle of its body is a transport error; the next request works on a new connection")
    func cutMidBody() async throws {
        let server = try RawHTTPServer { _, index in
            index == 0 ? .answerAndClose(Data("HTTP/1.1 207 Raw\r\nContent-Length: 1000\r\n\r\n<?xml version=".utf8))
                       : .answer(Self.listingAnswer)
        }
        defer { server.stop() }
        let store = try Self.store(server)
        guard case .transport = await WebDAVTesting.error({ try await store.list(.root) }) else {
            Issue.record("a cut answer was not a transport error")
            return
        }
        #expect(try await store.list(.root).count == 1)
        #expect(server.connections == 2)
    }

    @Test("a download whose Content-Length promises more than arrives fails, and no file is left")
    func downloadShorterThanAnnounced() async throws {
        let server = try RawHTTPServer { _, _ in
            .answerAndClose(Data("HTTP/1.1 200 Raw\r\nContent-Length: 100\r\nETag: \"t\"\r\n\r\nabc".utf8))
        }
        defer { server.stop() }
        let store = try Self.store(server)
        let scratch = try Scratch("plain-http-short")
        defer { scratch.remove() }
        let destination = scratch.url.appendingPathComponent("file")
        guard case .transport = await WebDAVTesting.error({
            try await store.download(try WebDAVTesting.path("a.txt"), to: destination, progress: { _, _ in })
        }) else {
            Issue.record("a short body was not a transport error")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("bytes past a Content-Length are not read as the next answer")
    func bodyLongerThanAnnounced() async throws {
        let server = try RawHTTPServer { _, index in
            guard index == 0 else { return .answer(Self.listingAnswer) }
            return .answer(Self.listingAnswer + Data("HTTP/1.1 500 Smuggled\r\nContent-Length: 0\r\n\r\n".utf8))
        }
        defer { server.stop() }
        let store = try Self.store(server)
        #expect(try await store.list(.root).count == 1)
        #expect(try await store.list(.root).count == 1)
        #expect(server.connections == 2)
    }

    @Test("a header flood is malformedResponse, and the next request works",
          arguments: [String(repeating: "X-Flood: " + String(repeating: "a", count: 1_000) + "\r\n", count: 200),
                      String(repeating: "X-Many: 1\r\n", count: 1_000)])
    func headerFlood(_ fields: String) async throws {
        let server = try RawHTTPServer { _, index in
            index == 0 ? .answerAndClose(Data(("HTTP/1.1 207 Raw\r\n" + fields + "Content-Length: 0\r\n\r\n").utf8))
                       : .answer(Self.listingAnswer)
        }
        defer { server.stop() }
        let store = try Self.store(server)
        guard case .malformedResponse = await WebDAVTesting.error({ try await store.list(.root) }) else {
            Issue.record("a header flood was not a malformedResponse")
            return
        }
        #expect(try await store.list(.root).count == 1)
    }

    @Test("garbage where an answer should be is malformedResponse; the connection is dropped",
          arguments: ["garbage\r\n\r\n", "HTTP/1.1 2OO OK\r\n\r\n", "HTTP/2 200\r\n\r\n", "\u{0}\u{1}\u{2}binary\r\n\r\n",
                      "HTTP/1.1 207 Raw\r\nContent-Length: -5\r\n\r\n", "HTTP/1.1 207 Raw\r\nContent-Length: 1, 2\r\n\r\n",
                      "HTTP/1.1 207 Raw\r\nBad Name: x\r\n\r\n", "HTTP/1.1 207 Raw\r\n folded\r\n\r\n",
                      "HTTP/1.1 207 Raw\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                      "HTTP/1.1 207 Raw\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n0\r\n\r\n",
                      "HTTP/1.1 207 Raw\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\n",
                      "HTTP/1.1 101 Switching\r\n\r\n"])
    func garbage(_ answer: String) async throws {
        let server = try RawHTTPServer { _, index in
            index == 0 ? .answer(Data(answer.utf8)) : .answer(Self.listingAnswer)
        }
        defer { server.stop() }
        let store = try Self.store(server)
        let error = await WebDAVTesting.error { try await store.list(.root) }
        guard case .malformedResponse = error else {
            Issue.record("\(answer.debugDescription) gave \(String(describing: error))")
            return
        }
        #expect(try await store.list(.root).count == 1)
        #expect(server.connections == 2)
    }

    @Test("a server trickling its answer a byte at a time fails at the exchange's deadline",
          arguments: ["HTTP/1.1 207 Raw\r\nContent-Length: 1000000\r\n\r\n", "HTTP/1.1 207 Raw\r\nX-Slow: "])
    func trickle(_ start: String) async throws {
        let server = try RawHTTPServer { _, _ in .trickle(Data(start.utf8), interval: .milliseconds(20)) }
        defer { server.stop() }
        let store = try Self.store(server, timeout: 60, exchangeDeadline: 1)
        let error = await WebDAVTesting.error { try await store.list(.root) }
        #expect(error == .timedOut)
    }

    @Test("a cancelled request in the middle of an answer ends with cancelled")
    func cancelMidAnswer() async throws {
        let server = try RawHTTPServer { _, _ in
            .trickle(Data("HTTP/1.1 207 Raw\r\nContent-Length: 1000000\r\n\r\n".utf8), interval: .milliseconds(20))
        }
        defer { server.stop() }
        let store = try Self.store(server)
        let call = Task { await WebDAVTesting.error { try await store.list(.root) } }
        try await Polling.until("the request to arrive") { !server.requests.isEmpty }
        call.cancel()
        #expect(await call.value == .cancelled)
    }

    @Test("a keep-alive connection the server closed after answering: the next request goes out on a new one")
    func closedAfterAnswer() async throws {
        let server = try RawHTTPServer { _, index in index == 0 ? .answerAndClose(Self.listingAnswer) : .answer(Self.listingAnswer) }
        defer { server.stop() }
        let store = try Self.store(server)
        #expect(try await store.list(.root).count == 1)
        #expect(try await store.list(.root).count == 1)
        #expect(server.connections == 2)
    }

    @Test("a server that closes an idle connection as the next request arrives: an idempotent request is sent again")
    func closedAsRequestArrives() async throws {
        let server = try RawHTTPServer { _, index in index == 1 ? .close : .answer(Self.listingAnswer) }
        defer { server.stop() }
        let store = try Self.store(server)
        #expect(try await store.list(.root).count == 1)
        #expect(try await store.list(.root).count == 1)
        #expect(server.requests.map(\.connection) == [0, 0, 1])
    }

    @Test("a request that is not idempotent is never sent twice")
    func moveIsNotRepeated() async throws {
        let server = try RawHTTPServer { _, index in index == 1 ? .close : .answer(Self.listingAnswer) }
        defer { server.stop() }
        let store = try Self.store(server)
        #expect(try await store.list(.root).count == 1)
        let error = await WebDAVTesting.error {
            try await store.move(try WebDAVTesting.path("a.txt"), to: try WebDAVTesting.path("b.txt"), condition: .unconditional)
        }
        guard case .transport = error else {
            Issue.record("a MOVE without answer gave \(String(describing: error))")
            return
        }
        #expect(server.requests.filter { $0.requestLine.hasPrefix("MOVE ") }.count == 1)
    }

    @Test("interim 1xx answers are skipped; 204 and 304 have no body and keep the connection")
    func bodilessAnswers() async throws {
        let server = try RawHTTPServer { request, _ in
            if request.requestLine.hasPrefix("DELETE") {
                return .answer(Data("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".utf8))
            }
            if request.requestLine.hasPrefix("MKCOL") { return .answer(Data("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n".utf8)) }
            return .answer(Self.listingAnswer)
        }
        defer { server.stop() }
        let store = try Self.store(server)
        try await store.delete(try WebDAVTesting.path("a.txt"), condition: .unconditional)
        try await store.makeFolder(try WebDAVTesting.path("new"))
        #expect(try await store.list(.root).count == 1)
        #expect(server.connections == 1)
    }

    @Test("credentials go as Basic Authorization on every request; a 401 comes back as it is, nothing resent")
    func credentials() async throws {
        let server = try RawHTTPServer { _, _ in .answer(RawHTTPServer.reply(401, "no", headers: ["WWW-Authenticate": "Basic realm=\"x\""])) }
        defer { server.stop() }
        let store = try Self.store(server, user: "me", password: "s3cret")
        #expect(await WebDAVTesting.error { try await store.list(.root) } == .unauthorized(status: 401))
        #expect(await WebDAVTesting.error { try await store.list(.root) } == .unauthorized(status: 401))
        let expected = "Authorization: Basic " + Data("me:s3cret".utf8).base64EncodedString() + "\r\n"
        #expect(server.requests.count == 2 && server.requests.allSatisfy { $0.head.contains(expected) })
    }

    @Test("an upload sends the whole file with its Content-Length, progress reaches the end")
    func upload() async throws {
        let server = try RawHTTPServer { _, _ in .answer(RawHTTPServer.reply(201, headers: ["ETag": "\"e1\""])) }
        defer { server.stop() }
        let store = try Self.store(server)
        let scratch = try Scratch("plain-http-upload")
        defer { scratch.remove() }
        var generator = SplitMix64(seed: 7)
        let contents = Data((0..<3_000_001).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        let source = scratch.url.appendingPathComponent("source")
        try contents.write(to: source)
        let last = Locked<(Int64, Int64)>((0, 0))
        let tag = try await store.upload(source, to: try WebDAVTesting.path("big.bin"), condition: .mustNotExist) { sent, total in
            last.withLock { $0 = (sent, total) }
        }
        #expect(tag == RemoteTag(strong: "\"e1\""))
        let request = try #require(server.requests.first)
        #expect(request.body == contents)
        #expect((request.head + "\r\n").contains("\r\nContent-Length: 3000001\r\n") && request.head.contains("\r\nIf-None-Match: *"))
        #expect(!request.head.lowercased().contains("expect:"))
        #expect(last.withLock { $0 } == (3_000_001, 3_000_001))
    }
}
