import Foundation
import SyncAgent
import Testing
import TestSupport

@Suite("WebDAV store: an unavailable server is a typed, retryable error", .timeLimit(.minutes(1 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct WebDAVAvailabilityTests {
    @Test("Apache answering 503 through its own configuration is unavailable (Retry-After read); served again, calls succeed")
    func serviceUnavailable() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            let scratch = try Scratch("webdav-503")
            defer { scratch.remove() }
            let path = try WebDAVTesting.path("doc.txt")
            try await WebDAVTesting.put(store, "before", at: path, in: scratch, condition: .mustNotExist)

            try server.setUnavailable(true)
            let listing = await WebDAVTesting.error { try await store.list(.root) }
            #expect(listing == .unavailable(status: 503, retryAfter: 7))
            #expect(listing?.isTransient == true)
            let failure1 = await WebDAVTesting.error {
                try await WebDAVTesting.put(store, "during", at: path, in: scratch, condition: .unconditional)
            }
            #expect(failure1 == .unavailable(status: 503, retryAfter: 7))
            let failure2 = await WebDAVTesting.error { try await store.download(path, to: scratch.url.appendingPathComponent("d"),
                                                                         progress: { _, _ in }) }
            #expect(failure2 == .unavailable(status: 503, retryAfter: 7))

            try server.setUnavailable(false)
            #expect(try await store.list(.root).map(\.path) == [path])
            #expect(try await WebDAVTesting.get(store, path, in: scratch) == "before")
        }
    }

    @Test("a stopped server is a transport error, which is transient")
    func stoppedServer() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            #expect(try await store.item(at: .root)?.isFolder == true)
            server.stop()
            let error = await WebDAVTesting.error { try await store.item(at: .root) }
            guard case .transport = error else {
                Issue.record("a stopped server gave \(String(describing: error))")
                return
            }
            #expect(error?.isTransient == true)
        }
    }
}
