import FileCoordination
import Foundation
import SyncAgent
import Testing
import TestSupport

// The plain-socket HTTP client against the real Apache mod_dav the other WebDAV tests use: a large
// file streamed both ways, and a long run of requests across Apache's keep-alive limit
// (MaxKeepAliveRequests 100: the 100th answer on a connection says `Connection: close`).

@Suite("Plain HTTP client against Apache mod_dav", .timeLimit(.minutes(3 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct PlainHTTPApacheTests {
    @Test("a 48 MiB file goes up and comes back byte for byte, with progress to the end both ways")
    func largeFileRoundTrip() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("plain-http-apache-large")
            defer { scratch.remove() }
            var generator = SplitMix64(seed: 48)
            let size = 48 << 20
            var contents = Data(count: size)
            contents.withUnsafeMutableBytes { bytes in
                for index in stride(from: 0, to: size, by: 8) {
                    bytes.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self)
                }
            }
            let source = scratch.url.appendingPathComponent("source")
            try contents.write(to: source)
            let path = try WebDAVTesting.path("large.bin")
            let sent = Locked<(Int64, Int64)>((0, 0))
            _ = try await store.upload(source, to: path, condition: .mustNotExist) { done, total in sent.withLock { $0 = (done, total) } }
            #expect(sent.withLock { $0 } == (Int64(size), Int64(size)))
            #expect(try Data(contentsOf: server.dataURL.appendingPathComponent("large.bin")) == contents)
            let destination = scratch.url.appendingPathComponent("back")
            let received = Locked<Int64>(0)
            _ = try await store.download(path, to: destination, listedSize: Int64(size)) { done, _ in received.withLock { $0 = done } }
            #expect(received.withLock { $0 } == Int64(size))
            #expect(try Data(contentsOf: destination) == contents)
        }
    }

    @Test("250 requests in a row all succeed across Apache's keep-alive limit")
    func manyRequests() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("plain-http-apache-many")
            defer { scratch.remove() }
            let path = try WebDAVTesting.path("a.txt")
            try await WebDAVTesting.put(store, "abc", at: path, in: scratch, condition: .mustNotExist)
            for round in 0..<250 {
                if round % 2 == 0 {
                    #expect(try await store.list(.root).map(\.path) == [path])
                } else {
                    #expect(try await WebDAVTesting.get(store, path, in: scratch) == "abc")
                }
            }
        }
    }
}
