import Foundation
import Glibc
import Testing
import TestSupport
@testable import SyncAgent

// An idle poll is nearly free: a folder whose PROPFIND answer is the same XML as at the last poll
// is not parsed again (WebDAVBodyDigest), the lister then returns the previous listing, and the
// engine reuses the plan made from the same input. What must never happen: a change missed — in
// particular a same-size rewrite in place on Apache, which leaves the folder's own tag as it was.

@Suite("WebDAV: unchanged listings are not read again, changes always are", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct WebDAVUnchangedListingTests {
    // MARK: The digest

    static let response = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:"><D:response xmlns:lp1="DAV:" xmlns:g0="DAV:" xmlns:g1="http://owncloud.org/ns">\
        <D:href>/a/b.txt</D:href><D:propstat><D:prop><lp1:getetag>"abc123"</lp1:getetag></D:prop>\
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
        """

    static func token(_ text: String) -> RemoteListingToken { WebDAVBodyDigest.token(of: Data(text.utf8)) }

    @Test("the order of attributes does not count (Apache reorders namespace declarations per request)")
    func attributeOrder() {
        let reordered = Self.response.replacingOccurrences(
            of: #"xmlns:lp1="DAV:" xmlns:g0="DAV:" xmlns:g1="http://owncloud.org/ns""#,
            with: #"xmlns:g1="http://owncloud.org/ns" xmlns:lp1="DAV:" xmlns:g0="DAV:""#)
        #expect(reordered != Self.response)
        #expect(Self.token(reordered) == Self.token(Self.response))
        #expect(Self.token(Self.response) == Self.token(Self.response))
    }

    @Test("any other change counts: a tag's digit, an attribute's value, an href, the length, markup")
    func changesCount() {
        let base = Self.token(Self.response)
        let variants = [
            Self.response.replacingOccurrences(of: "abc123", with: "abc124"),
            Self.response.replacingOccurrences(of: "abc123", with: "abc1234"),
            Self.response.replacingOccurrences(of: #"xmlns:g0="DAV:""#, with: #"xmlns:g0="DAX:""#),
            Self.response.replacingOccurrences(of: "/a/b.txt", with: "/a/c.txt"),
            Self.response.replacingOccurrences(of: "200 OK", with: "404 No"),
            Self.response + " ",
            Self.response.replacingOccurrences(of: "<D:href>", with: "<!-- x --><D:href>"),
        ]
        for variant in variants {
            #expect(variant != Self.response)
            #expect(Self.token(variant) != base, "\(variant)")
        }
        // A change in any one byte of a longer text changes the token.
        var bytes = Array(Self.response.utf8)
        for index in stride(from: 0, to: bytes.count, by: 7) where bytes[index] != UInt8(ascii: " ") {
            let saved = bytes[index]
            bytes[index] = saved == UInt8(ascii: "z") ? UInt8(ascii: "y") : UInt8(ascii: "z")
            #expect(WebDAVBodyDigest.token(of: Data(bytes)) != base, "byte \(index)")
            bytes[index] = saved
        }
    }

    @Test("broken markup neither traps nor passes for the well-formed answer", arguments: [
        "<a b", "<a b=\"x", "<", "<!--", "<![CDATA[ <a x=\"1\" y=\"2\">", "<a x=\"1\" y>", "</", "<?",
    ])
    func brokenMarkup(_ text: String) {
        _ = Self.token(text)
        #expect(Self.token(text + "!") != Self.token(text))
        // Inside CDATA, attribute-like text is text: its order counts.
        #expect(Self.token("<![CDATA[ <a x=\"1\" y=\"2\"> ]]>") != Self.token("<![CDATA[ <a y=\"2\" x=\"1\"> ]]>"))
    }

    // MARK: Against Apache

    @Test("Apache (Digest): an unchanged folder answers .unchanged poll after poll; a same-size rewrite in place does not",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
    func apacheSameSizeRewrite() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-unchanged")
            defer { scratch.remove() }
            let folder = try WebDAVTesting.path("docs")
            try await store.makeFolder(folder)
            for index in 0..<20 {
                let path = try #require(folder.appending("file \(index).txt"))
                try await WebDAVTesting.put(store, "version A of \(index)", at: path, in: scratch, condition: .mustNotExist)
            }
            // Apache marks the tag of an item changed less than a second ago weak (the folder's
            // `W/""` becomes `""` then), so the answer changes once more when that second is
            // over. The folder's time is put a minute back on the server's disk, so its tag is
            // settled now, without waiting on a clock; then listed until two answers are alike.
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)],
                                                  ofItemAtPath: server.dataURL.appendingPathComponent("docs").path)
            var token: RemoteListingToken?
            var entry: RemoteItem?
            var items: [RemoteItem] = []
            try await Polling.until("two answers about the settled folder alike") {
                switch try await store.listWithFolder(folder, unlessUnchangedSince: token) {
                case .unchanged: return true
                case .listed(let folderEntry, let children, let newToken):
                    (entry, items, token) = (folderEntry, children, newToken)
                    #expect(newToken != nil, "Apache's answers have a token")
                    return false
                }
            }
            #expect(items.count == 20)
            // Apache orders the namespace declarations differently from one answer to the next:
            // still unchanged, every time.
            for _ in 0..<10 {
                guard case .unchanged = try await store.listWithFolder(folder, unlessUnchangedSince: token) else {
                    Issue.record("an unchanged folder was read again")
                    return
                }
            }
            // A same-size rewrite in place, on the server's disk: the folder's own tag stays.
            let target = try #require(folder.appending("file 7.txt"))
            let before = try #require(items.first { $0.path == target })
            let onDisk = server.dataURL.appendingPathComponent("docs/file 7.txt").path
            let descriptor = open(onDisk, O_WRONLY)
            try #require(descriptor >= 0)
            let replacement = Array("version B of 7".utf8)
            #expect(replacement.count == Int(before.size ?? -1))
            #expect(pwrite(descriptor, replacement, replacement.count, 0) == replacement.count)
            close(descriptor)
            let folderNow = try #require(try await store.item(at: folder))
            #expect(folderNow.tag == entry?.tag, "the premise: Apache's folder tag ignores a same-size rewrite inside")
            guard case .listed(_, let itemsNow, let tokenNow) = try await store.listWithFolder(folder, unlessUnchangedSince: token) else {
                Issue.record("a same-size rewrite in place was not seen")
                return
            }
            #expect(tokenNow != token)
            let after = try #require(itemsNow.first { $0.path == target })
            #expect(after.size == before.size)
            #expect(after.tag != before.tag)
        }
    }

    @Test("the lister returns the previous listing when nothing changed, and sees a rewrite, a new file and a new folder",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
    func listerReuse() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-lister-reuse")
            defer { scratch.remove() }
            for name in ["a", "a/b", "c"] { try await store.makeFolder(try WebDAVTesting.path(name)) }
            for name in ["a/one.txt", "a/b/two.txt", "c/three.txt", "top.txt"] {
                try await WebDAVTesting.put(store, "first \(name)", at: try WebDAVTesting.path(name), in: scratch, condition: .mustNotExist)
            }
            let first = try await RemoteLister.list(store)
            #expect(!first.isUnchanged)
            #expect(first.items.count == 7)
            // Tags of folders changed less than a second ago are weak and turn strong: the
            // folders' times go a minute back on the server's disk (settled now, no clock waited
            // on); then listed until the listing is the same as the one before.
            for name in ["", "a", "a/b", "c"] {
                try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)],
                                                      ofItemAtPath: server.dataURL.appendingPathComponent(name).path)
            }
            var latest = first
            try await Polling.until("a listing of the unchanged tree the same as the one before") {
                let next = try await RemoteLister.list(store, previous: latest)
                latest = next
                return next.isUnchanged
            }
            let second = try await RemoteLister.list(store, previous: latest)
            #expect(second.isUnchanged)
            #expect(second.items == latest.items)
            #expect(Set(second.items.keys) == Set(first.items.keys))

            // Same size, in place, deep down.
            let onDisk = server.dataURL.appendingPathComponent("a/b/two.txt").path
            let descriptor = open(onDisk, O_WRONLY)
            try #require(descriptor >= 0)
            let replacement = Array("FIRST a/b/two.txt".utf8)
            #expect(pwrite(descriptor, replacement, replacement.count, 0) == replacement.count)
            close(descriptor)
            let third = try await RemoteLister.list(store, previous: second)
            #expect(!third.isUnchanged)
            #expect(third.items["a/b/two.txt"]?.tag != second.items["a/b/two.txt"]?.tag)
            #expect(third.items["a/b/two.txt"]?.size == second.items["a/b/two.txt"]?.size)
            #expect(third.items["a/one.txt"] == second.items["a/one.txt"])

            try await store.makeFolder(try WebDAVTesting.path("c/new"))
            try await WebDAVTesting.put(store, "new", at: try WebDAVTesting.path("c/new/four.txt"), in: scratch, condition: .mustNotExist)
            let fourth = try await RemoteLister.list(store, previous: third)
            #expect(!fourth.isUnchanged)
            #expect(fourth.items["c/new/four.txt"] != nil && fourth.items["c/new"]?.isFolder == true)
            latest = fourth
            try await Polling.until("the listing unchanged again once nothing is written") {
                let next = try await RemoteLister.list(store, previous: latest)
                latest = next
                return next.isUnchanged
            }
            #expect(Set(latest.items.keys) == Set(fourth.items.keys))
        }
    }

    // MARK: The plan of an idle poll

    @Test("a plan is reused only for the same input")
    func planReuse() {
        var listing = RemoteListing()
        let planner = SyncPlanner()
        let fingerprint = LocalFingerprint(size: 1, modifiedNanoseconds: 1, inode: 1, changedNanoseconds: 1)
        let local = ["x.txt": LocalItem(path: "x.txt", isFolder: false, fingerprint: fingerprint)]
        let input = SyncPlanInput(base: [:], local: local, remote: [:])
        let first = listing.plan(input, with: planner)
        #expect(first.steps.map(\.path) == ["x.txt"])
        #expect(listing.plan(input, with: planner) == first)
        // Any other input is planned again, never answered with the kept plan.
        var added = input
        added.local?["y.txt"] = LocalItem(path: "y.txt", isFolder: false, fingerprint: fingerprint)
        #expect(listing.plan(added, with: planner).steps.count == 2)
        var missing = input
        missing.local = nil
        #expect(listing.plan(missing, with: planner).refusal != nil)
        var uncertain = input
        uncertain.localUncertain = ["x.txt"]
        uncertain.remote = ["z.txt": RemoteItem(path: RemotePath("z.txt") ?? .root, isFolder: false, tag: RemoteTag(strong: "\"1\""),
                                                size: 1, modified: nil)]
        #expect(listing.plan(uncertain, with: planner).steps.map(\.path).sorted() == ["x.txt", "z.txt"])
        #expect(listing.plan(input, with: planner) == first)
    }
}
