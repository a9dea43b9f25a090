import FileCoordination
import Foundation
import SyncAgent
import Testing
import TestSupport

// Answers no honest server gives, from a scripted loopback server (WebDAVScriptedServer): every one
// must end as a typed error, with bounded memory, and no item outside the root may come out.

@Suite("WebDAV store: hostile and broken answers are typed errors", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct WebDAVHostileAnswerTests {
    /// A multistatus listing of the folder `/dav/` with one more response whose href is `href`.
    static func listing(port: UInt16, href: String) -> Data {
        Data("""
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:">
            <D:response><D:href>/dav/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>\
            <D:getetag>"root"</D:getetag></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>/dav/fine.txt</D:href><D:propstat><D:prop><D:resourcetype/><D:getetag>"f"</D:getetag>\
            <D:getcontentlength>3</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            <D:response><D:href>\(href)</D:href><D:propstat><D:prop><D:resourcetype/><D:getetag>"x"</D:getetag>\
            </D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
            </D:multistatus>
            """.utf8)
    }

    static func reply(_ body: Data) -> WebDAVScriptedServer.Answer {
        .reply(status: 207, headers: ["Content-Type": "application/xml; charset=utf-8"], body: body)
    }

    @Test("hrefs that leave the folder are refused, whatever their disguise",
          arguments: ["/dav/../etc/passwd", "/dav/%2e%2e/secret", "/dav/%2E%2E/secret", "/dav/a%2Fb", "/dav/a%2fb",
                      "/dav/nul%00.txt", "/other/place.txt", "/", "/dav//double", "/dav/./dot",
                      "http://evil.example/dav/x.txt", "https://127.0.0.1/dav/x.txt", "relative.txt",
                      "/dav/x.txt?query", "/dav/x.txt#fragment", "/dav/sub/deeper.txt", "/dav/%zz"])
    func escapingHrefsAreRefused(_ href: String) async throws {
        let hostile = try WebDAVScriptedServer { _, _ in Self.reply(Self.listing(port: 0, href: href)) }
        defer { hostile.stop() }
        let store = try WebDAVTesting.store(try #require(URL(string: "http://127.0.0.1:\(hostile.port)/dav/")))
        let error = await WebDAVTesting.error { try await store.list(.root) }
        #expect(error == .escapingPath(href))
    }

    @Test("an absolute href naming the same server is accepted, percent-decoded")
    func absoluteHrefOnTheSameServer() async throws {
        let href = "http://127.0.0.1:PORT/dav/with%20space%23.txt"
        let selfNaming = SelfNamingListing(href: href)
        let named = try WebDAVScriptedServer { _, _ in Self.reply(selfNaming.body()) }
        defer { named.stop() }
        selfNaming.port.withLock { $0 = named.port }
        let store = try WebDAVTesting.store(try #require(URL(string: "http://127.0.0.1:\(named.port)/dav/")))
        let items = try await store.list(.root)
        #expect(items.map(\.path.description) == ["fine.txt", "with space#.txt"])
        #expect(items.first?.size == 3 && items.first?.tag == RemoteTag(strong: "\"f\""))
    }

    @Test("a Nextcloud-style listing: oc:fileid, unquoted and weak tags normalised, dates read, a folder's 404 propstat ignored")
    func nextcloudStyleListing() async throws {
        let body = Data("""
            <?xml version="1.0"?>
            <d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">
            <d:response><d:href>/remote.php/dav/files/me/Docs/</d:href>
             <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype><d:getetag>"root-tag"</d:getetag>
              <oc:fileid>100</oc:fileid></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
            <d:response><d:href>/remote.php/dav/files/me/Docs/Sub%20Folder/</d:href>
             <d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype><d:getetag>"6570ab"</d:getetag>
              <oc:fileid>101</oc:fileid><d:getlastmodified>Fri, 27 Nov 2026 18:05:58 GMT</d:getlastmodified></d:prop>
              <d:status>HTTP/1.1 200 OK</d:status></d:propstat>
             <d:propstat><d:prop><d:getcontentlength/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>
            <d:response><d:href>/remote.php/dav/files/me/Docs/a%C3%A9.txt</d:href>
             <d:propstat><d:prop><d:resourcetype/><d:getetag>16335543-1795411451-8</d:getetag><d:getcontentlength>8</d:getcontentlength>
              <oc:fileid>102</oc:fileid></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
            <d:response><d:href>/remote.php/dav/files/me/Docs/weak.txt</d:href>
             <d:propstat><d:prop><d:resourcetype/><d:getetag>W/"8-660eac5a037ca"</d:getetag><d:getcontentlength>8</d:getcontentlength>
              <d:getlastmodified>garbage date</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
            </d:multistatus>
            """.utf8)
        let server = try WebDAVScriptedServer { _, _ in Self.reply(body) }
        defer { server.stop() }
        let store = try WebDAVTesting.store(try #require(URL(string: "http://127.0.0.1:\(server.port)/remote.php/dav/files/me/Docs")))
        let items = try await store.list(.root)
        #expect(items.map(\.path.description) == ["Sub Folder", "aé.txt", "weak.txt"])
        #expect(items.map(\.fileID) == ["101", "102", nil])
        #expect(items.map(\.isFolder) == [true, false, false])
        #expect(items.map(\.size) == [nil, 8, 8])
        #expect(items[0].modified == Date(timeIntervalSince1970: 1_795_802_758))
        #expect(items[2].modified == nil)
        #expect(items[1].tag == RemoteTag(strong: "\"16335543-1795411451-8\""))
        #expect(items[2].tag?.isWeak == true && items[2].tag?.value == "\"8-660eac5a037ca\"")
        #expect(server.requestLines.allSatisfy { $0.hasPrefix("PROPFIND /remote.php/dav/files/me/Docs/ ") })
    }

    @Test("malformed XML, a non-multistatus document and a response without href are malformedResponse",
          arguments: ["<D:multistatus xmlns:D=\"DAV:\"><D:response>", "not xml at all", "<html><body>hi</body></html>",
                      "<D:multistatus xmlns:D=\"DAV:\"><D:response><D:propstat/></D:response></D:multistatus>",
                      "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
                        + "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">"
                        + "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\"><!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">]>"
                        + "<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>&f;</D:href></D:response></D:multistatus>"])
    func malformedAnswers(_ body: String) async throws {
        let server = try WebDAVScriptedServer { _, _ in Self.reply(Data(body.utf8)) }
        defer { server.stop() }
        let store = try WebDAVTesting.store(server.baseURL)
        guard case .malformedResponse = await WebDAVTesting.error({ try await store.list(.root) }) else {
            Issue.record("not a malformedResponse for \(body)")
            return
        }
    }

    @Test("an endless answer is cut at the size limit: malformedResponse, memory bounded")
    func enormousAnswer() async throws {
        let chunk = Data(String(repeating: "<D:response><D:href>/x</D:href></D:response>\n", count: 1_000).utf8)
        let server = try WebDAVScriptedServer { _, _ in .endless(chunk: chunk, limit: 1 << 30) }
        defer { server.stop() }
        let store = try WebDAVTesting.store(server.baseURL, maximumResponseBytes: 1 << 20)
        guard case .malformedResponse = await WebDAVTesting.error({ try await store.list(.root) }) else {
            Issue.record("an endless answer was not a malformedResponse")
            return
        }
        // An announced length over the limit fails before the body is read.
        let announced = try WebDAVScriptedServer { _, _ in
            .reply(status: 207, headers: [:], body: Data(repeating: 0x20, count: (1 << 20) + 10))
        }
        defer { announced.stop() }
        let small = try WebDAVTesting.store(announced.baseURL, maximumResponseBytes: 1 << 20)
        guard case .malformedResponse = await WebDAVTesting.error({ try await small.item(at: .root) }) else {
            Issue.record("an over-long answer was not a malformedResponse")
            return
        }
    }

    @Test("statuses map to typed errors: 401/403 unauthorized, 429/5xx unavailable with Retry-After, redirects unexpected",
          arguments: [(401, "", RemoteStoreError.unauthorized(status: 401)), (403, "", .unauthorized(status: 403)),
                      (429, "120", .unavailable(status: 429, retryAfter: 120)), (503, "", .unavailable(status: 503, retryAfter: nil)),
                      (502, "Wed, 21 Oct 2015 07:28:00 GMT", .unavailable(status: 502, retryAfter: 0)),
                      (301, "", .unexpectedStatus(301, method: "PROPFIND", path: .root)),
                      (418, "", .unexpectedStatus(418, method: "PROPFIND", path: .root))])
    func statuses(_ status: Int, _ retryAfter: String, _ expected: RemoteStoreError) async throws {
        var headers = ["Location": "http://evil.example/"]
        if !retryAfter.isEmpty { headers["Retry-After"] = retryAfter }
        let server = try WebDAVScriptedServer { [headers] _, _ in .reply(status: status, headers: headers, body: Data("no".utf8)) }
        defer { server.stop() }
        let store = try WebDAVTesting.store(server.baseURL, user: "me", password: "s3cret-password")
        let failure1 = await WebDAVTesting.error { try await store.list(.root) }
        #expect(failure1 == expected)
        #expect(server.requestLines.allSatisfy { $0.hasPrefix("PROPFIND / ") })
    }

    @Test("credentials are sent as Basic auth and never appear in the store's name")
    func credentials() async throws {
        let server = try WebDAVScriptedServer { _, _ in .reply(status: 401, headers: [:], body: Data()) }
        defer { server.stop() }
        let url = try #require(URL(string: "http://me:urlpass@127.0.0.1:\(server.port)/dav/"))
        let store = try WebDAVTesting.store(url, user: "me", password: "s3cret-password")
        #expect(!store.displayName.contains("s3cret") && !store.displayName.contains("urlpass"))
        let configuration = WebDAVConfiguration(baseURL: url, user: "me", password: "s3cret-password")
        #expect(!configuration.description.contains("s3cret") && !"\(configuration)".contains("urlpass"))
        let failure2 = await WebDAVTesting.error { try await store.item(at: .root) }
        #expect(failure2 == .unauthorized(status: 401))
    }

    @Test("plain http is refused to a host that is not loopback, unless opted in; https and loopback are accepted")
    func plainHTTPRefused() throws {
        for text in ["http://example.org/dav/", "http://192.168.1.10/", "http://[fe80::1]/", "http://128.0.0.1/",
                     "http://localhost.evil.example/", "http://localhost/x/", "ftp://127.0.0.1/", "file:///tmp/"] {
            let url = try #require(URL(string: text))
            #expect(throws: RemoteStoreError.self, "\(text)") { try WebDAVStore(configuration: WebDAVConfiguration(baseURL: url)) }
        }
        for text in ["https://example.org/dav", "http://127.0.0.1:8080/", "http://127.5.6.7/", "http://[::1]:81/"] {
            let url = try #require(URL(string: text))
            #expect(throws: Never.self, "\(text)") { try WebDAVStore(configuration: WebDAVConfiguration(baseURL: url)) }
        }
        let optedIn = WebDAVConfiguration(baseURL: try #require(URL(string: "http://example.org/dav/")), allowsInsecureHTTP: true)
        #expect(throws: Never.self) { try WebDAVStore(configuration: optedIn) }
    }

    @Test("a server that is not there is a transport error; one that never answers times out")
    func unreachableAndSilent() async throws {
        let port = try LoopbackHTTP.freePorts(1)[0]
        let store = try WebDAVTesting.store(try #require(URL(string: "http://127.0.0.1:\(port)/")))
        guard case .transport = await WebDAVTesting.error({ try await store.item(at: .root) }) else {
            Issue.record("a closed port was not a transport error")
            return
        }
        // A server that reads the request and never answers.
        let silent = try WebDAVScriptedServer { _, _ in .silence }
        defer { silent.stop() }
        let quiet = try WebDAVTesting.store(silent.baseURL, timeout: 1)
        let failure3 = await WebDAVTesting.error { try await quiet.item(at: .root) }
        #expect(failure3 == .timedOut)
    }

    @Test("a cancelled call ends with cancelled")
    func cancellation() async throws {
        let silent = try WebDAVScriptedServer { _, _ in .silence }
        defer { silent.stop() }
        let store = try WebDAVTesting.store(silent.baseURL)
        let call = Task { await WebDAVTesting.error { try await store.list(.root) } }
        try await Polling.until("the request to arrive") { !silent.requestLines.isEmpty }
        call.cancel()
        #expect(await call.value == .cancelled)
    }
}

/// A listing whose href names the server it comes from (known only after it started listening).
private final class SelfNamingListing: Sendable {
    let href: String
    let port = Locked<UInt16>(0)
    init(href: String) { self.href = href }
    func body() -> Data {
        WebDAVHostileAnswerTests.listing(port: 0, href: href.replacingOccurrences(of: "PORT", with: "\(port.withLock { $0 })"))
    }
}
