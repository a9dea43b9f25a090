import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Glibc
import Testing
import TestSupport
import Ubiquity
@testable import SyncAgent

/// The fixes of an adversarial review: a FIFO in the request inbox, an overall deadline per
/// request, a capped GET body, bounded listings, literal loopback only, tags without control
/// characters, and a log cut back after a failed append.
@Suite("Review fixes: bounded reads, deadlines, caps", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct ReviewFixTests {
    // MARK: 1. Request inbox

    @Test("a FIFO named like a request is skipped and removed without blocking; a real request next to it is taken")
    func fifoRequestDoesNotBlock() throws {
        try Scratch.with("review-inbox") { root in
            let folder = AgentFolder(root: root)
            try FileManager.default.createDirectory(at: folder.requestsFolder, withIntermediateDirectories: true)
            let fifo = folder.requestsFolder.appending(path: "stuck.request").path
            #expect(mkfifo(fifo, 0o600) == 0)
            try folder.send(AgentRequest(command: .pause, id: "real"))
            let taken = RequestInbox(folder: folder).take()
            #expect(taken.map(\.id) == ["real"])
            #expect(access(fifo, F_OK) != 0)
        }
    }

    @Test("a request file longer than the limit is not read, only removed")
    func oversizedRequestIgnored() throws {
        try Scratch.with("review-inbox") { root in
            let folder = AgentFolder(root: root)
            try FileManager.default.createDirectory(at: folder.requestsFolder, withIntermediateDirectories: true)
            let big = folder.requestsFolder.appending(path: "big.request")
            try Data(repeating: 0x20, count: RequestInbox.maximumRequestSize + 1).write(to: big)
            #expect(RequestInbox(folder: folder).take().isEmpty)
            #expect(!FileManager.default.fileExists(atPath: big.path))
        }
    }

    // MARK: 2. Overall deadline

    @Test("a server that never answers fails with timedOut at the exchange deadline, not the long idle timeout")
    func exchangeDeadline() async throws {
        // `.silence` holds the connection for up to 30 s and then closes it (a transport error);
        // with an idle timeout of an hour only the exchange deadline can give timedOut.
        let server = try WebDAVScriptedServer { _, _ in .silence }
        defer { server.stop() }
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/dav/"))
        let store = try WebDAVStore(configuration: WebDAVConfiguration(baseURL: url, requestTimeout: 3600, exchangeDeadline: 0.5))
        let error = await WebDAVTesting.error { try await store.list(.root) }
        #expect(error == .timedOut)
    }

    @Test("the deadlines default to 5 minutes and 24 hours")
    func deadlineDefaults() throws {
        let configuration = WebDAVConfiguration(baseURL: try #require(URL(string: "https://example.org/dav/")))
        #expect(configuration.exchangeDeadline == 5 * 60)
        #expect(configuration.transferDeadline == 24 * 60 * 60)
    }

    // MARK: 3. GET body cap

    static func okResponse(_ headers: [String: String] = [:]) throws -> HTTPURLResponse {
        let url = try #require(URL(string: "http://127.0.0.1/dav/a"))
        return try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    @Test("a file body past its Content-Length fails before the excess is written")
    func bodyPastContentLength() throws {
        try Scratch.with("review-get") { folder in
            let destination = folder.appending(path: "a")
            let exchange = WebDAVExchange(sink: .file(destination), description: "GET /dav/a")
            let response = try Self.okResponse(["Content-Length": "4"])
            #expect(exchange.receive(response))
            #expect(exchange.receive(Data("abc".utf8)))
            #expect(!exchange.receive(Data("def".utf8)))
            #expect(Self.fileSize(destination.path) == 3)
        }
    }

    @Test("a chunked body (no Content-Length) past the expected size fails before the excess is written")
    func chunkedBodyPastCap() throws {
        try Scratch.with("review-get") { folder in
            let destination = folder.appending(path: "a")
            let exchange = WebDAVExchange(sink: .file(destination), description: "GET /dav/a", maximumFileBytes: 8)
            let response = try Self.okResponse()
            #expect(exchange.receive(response))
            #expect(exchange.receive(Data(count: 6)))
            #expect(!exchange.receive(Data(count: 6)))
            #expect(Self.fileSize(destination.path) == 6)
        }
    }

    // MARK: 4. Listing bounds

    @Test("folders, also in the conflict area, count toward the item limit")
    func foldersCount() async throws {
        let store = InMemoryRemoteStore()
        for index in 0..<4 { store.put("x", at: "\(SyncExclusions.conflictArea)/f\(index)/deeper/v") }
        let error = await WebDAVTesting.error { try await RemoteLister.list(store, limits: .init(items: 6, depth: 256)) }
        guard case .malformedResponse(let reason) = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("more than 6 items"))
        // Within the limit it lists.
        let listing = try await RemoteLister.list(store, limits: .init(items: 100, depth: 256))
        #expect(listing.conflictFiles.count == 4)
    }

    @Test("a tree deeper than the depth limit is a typed error")
    func depthLimit() async throws {
        let store = InMemoryRemoteStore()
        store.put("x", at: (0..<10).map { "d\($0)" }.joined(separator: "/") + "/file")
        let error = await WebDAVTesting.error { try await RemoteLister.list(store, limits: .init(items: 100, depth: 8)) }
        guard case .malformedResponse(let reason) = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("deeper than 8 levels"))
        #expect(RemoteLister.maximumDepth == 256)
        let listing = try await RemoteLister.list(store)
        #expect(listing.items.count == 11)
    }

    // MARK: 5. Loopback and tags

    @Test("only literal loopback addresses count as loopback")
    func literalLoopbackOnly() {
        for host in ["127.0.0.1", "127.255.0.9", "::1", "[::1]", "0:0:0:0:0:0:0:1"] {
            #expect(WebDAVConfiguration.isLoopback(host: host), "\(host)")
        }
        for host in ["localhost", "LOCALHOST", "localhost.", "ip6-localhost", "128.0.0.1", "127.0.0", "example.org"] {
            #expect(!WebDAVConfiguration.isLoopback(host: host), "\(host)")
        }
    }

    @Test("a tag holding a control character is refused", arguments: ["\"a\r\nX-Evil: 1\"", "\"a\nb\"", "\"a\0\"", "\"a\u{7F}\"", "\"a\tb\""])
    func tagWithControlCharacter(_ raw: String) {
        #expect(RemoteTag(parsing: raw) == nil)
    }

    @Test("ordinary tags still parse")
    func ordinaryTags() {
        #expect(RemoteTag(parsing: " \"abc\" ")?.value == "\"abc\"")
        #expect(RemoteTag(parsing: "W/\"abc\"")?.isWeak == true)
        #expect(RemoteTag(parsing: "16335543-1795411451-8")?.value == "\"16335543-1795411451-8\"")
    }

    // MARK: 6. Journal rollback

    @Test("an append that fails part-way on a full disk is cut back, so a later append is read back",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func appendRollback() throws {
        try SmallTmpfs.withMount(size: "64k") { mount in
            let folder = mount.appending(path: "journal")
            let journal = try SyncJournal(folder: folder)
            try journal.put(JournalTests.entry("a.txt"))
            // Fill the file system: the log's last page keeps its spare room, nothing more fits.
            let filler = mount.appending(path: "filler").path
            let fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            let page = [UInt8](repeating: 0x2E, count: 4096)
            while page.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            close(fd)
            let logPath = folder.appending(path: "log").path
            let before = Self.fileSize(logPath)
            // Larger than a page: some of it fits in the log's last page, the rest does not.
            #expect(throws: JournalError.self) { try journal.put(JournalTests.entry(String(repeating: "b", count: 12_000))) }
            #expect(Self.fileSize(logPath) == before)
            unlink(filler)
            try journal.put(JournalTests.entry("c.txt"))
            let reopened = try SyncJournal(folder: folder)
            #expect(Set(reopened.entries.keys) == ["a.txt", "c.txt"])
        }
    }
}
