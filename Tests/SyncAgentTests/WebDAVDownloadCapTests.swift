import FileCoordination
import Foundation
import Glibc
import Testing
import TestSupport
@testable import SyncAgent

// A download of a listed file stops once the body passes the listed size plus a margin, whether
// or not the answer announced a length: a typed error, and no partial file left behind.

@Suite("WebDAV: downloads are capped at the listed size plus a margin", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct WebDAVDownloadCapTests {
    @Test("the margin: a tenth of the size, at least 1 MiB, never overflowing")
    func margin() {
        #expect(WebDAVStore.downloadLimit(forListedSize: 0) == 1 << 20)
        #expect(WebDAVStore.downloadLimit(forListedSize: 1000) == 1000 + (1 << 20))
        #expect(WebDAVStore.downloadLimit(forListedSize: 100 << 20) == (100 << 20) + (10 << 20))
        #expect(WebDAVStore.downloadLimit(forListedSize: -5) == 1 << 20)
        #expect(WebDAVStore.downloadLimit(forListedSize: .max) == .max)
    }

    @Test("an answer without a length that never ends is cut: malformedResponse, the partial file removed")
    func endlessBodyIsCut() async throws {
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 64 * 1024)
        // No Content-Length, ends only when the client hangs up (or after 1 GiB).
        let server = try WebDAVScriptedServer { _, _ in .endless(chunk: chunk, limit: 1 << 30) }
        defer { server.stop() }
        let store = try WebDAVTesting.store(server.baseURL)
        let scratch = try Scratch("webdav-download-cap")
        defer { scratch.remove() }
        let destination = scratch.url.appendingPathComponent("download")
        let received = ReceivedBytes()
        let error = await WebDAVTesting.error {
            try await store.download(try WebDAVTesting.path("big.bin"), to: destination, listedSize: 1000) { done, _ in
                received.record(done)
            }
        }
        guard case .malformedResponse(let reason) = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("\(WebDAVStore.downloadLimit(forListedSize: 1000))"))
        #expect(received.most <= WebDAVStore.downloadLimit(forListedSize: 1000), "no byte past the cap was written")
        #expect(!FileManager.default.fileExists(atPath: destination.path), "the partial file is removed")
    }

    @Test("Apache: a file of the listed size, or a little larger (grown since the listing), arrives whole",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
    func listedSizeArrives() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-download-listed")
            defer { scratch.remove() }
            let path = try WebDAVTesting.path("file.txt")
            let text = String(repeating: "0123456789", count: 1000)
            try await WebDAVTesting.put(store, text, at: path, in: scratch, condition: .mustNotExist)
            let listed = try #require(try await store.item(at: path)?.size)
            let destination = scratch.url.appendingPathComponent("got")
            _ = try await store.download(path, to: destination, listedSize: listed) { _, _ in }
            #expect(WebDAVTesting.text(destination) == text)
            // Listed smaller than it is now, within the margin: still whole.
            _ = try await store.download(path, to: destination, listedSize: listed / 2) { _, _ in }
            #expect(WebDAVTesting.text(destination) == text)
        }
    }
}

/// The most bytes a progress callback reported (called on the store's delegate queue).
final class ReceivedBytes: Sendable {
    private let value = Locked<Int64>(0)
    func record(_ count: Int64) { value.withLock { $0 = max($0, count) } }
    var most: Int64 { value.withLock { $0 } }
}
