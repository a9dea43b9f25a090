import Foundation
import SyncAgent
import Testing
import TestSupport

// The probe against the real servers whose behaviour ../shared/peers/README.md records: it must tell
// the safe one (Apache with FileETag Digest) from each rule-breaker, and leave nothing behind.

@Suite("WebDAV probe: what each real server honours", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct WebDAVProbeTests {
    /// Runs the probe against a fresh server of `kind`; checks that the probe folder is gone and the
    /// result is kept by the store.
    func probe(_ kind: WebDAVServer.Kind) async throws -> RemoteCapabilities {
        try await WebDAVServer.with(kind) { server in
            let store = try WebDAVTesting.store(server.baseURL)
            #expect(await store.capabilities == .unknown)
            let capabilities = try await store.probe()
            #expect(await store.capabilities == capabilities)
            #expect(store.probedCapabilities == capabilities)
            let left = try FileManager.default.contentsOfDirectory(atPath: server.dataURL.path)
            #expect(left.isEmpty, "the probe left \(left)")
            print("probe \(kind): \(capabilities)")
            return capabilities
        }
    }

    @Test("Apache with FileETag Digest: conditions honoured, strong tags at once, every write changes the tag — safe",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
    func apacheDigest() async throws {
        let found = try await probe(.apache(fileETag: "Digest"))
        #expect(found.honoursConditions && found.strongTagsImmediately && found.tagChangesOnEveryWrite)
        #expect(found.isSafeForConditionalWrites)
        #expect(!found.folderTagsPropagate && !found.hasFileIDs && !found.tagInWriteResponse)
    }

    @Test("Apache with its default FileETag MTime Size: tags weak right after a write — not safe",
          .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
    func apacheMTimeSize() async throws {
        let found = try await probe(.apache(fileETag: "MTime Size"))
        #expect(found.honoursConditions)
        #expect(!found.strongTagsImmediately)
        #expect(!found.isSafeForConditionalWrites)
        #expect(!found.folderTagsPropagate && !found.tagInWriteResponse)
    }

    @Test("WsgiDAV: a same-size rewrite within the second keeps the tag — not safe",
          .enabled(if: RequiredTool.wsgidav.isInstalledOrRequired, Comment(rawValue: RequiredTool.wsgidav.missingMessage)))
    func wsgidav() async throws {
        let found = try await probe(.wsgidav)
        #expect(found.honoursConditions)
        #expect(!found.tagChangesOnEveryWrite)
        #expect(!found.isSafeForConditionalWrites)
    }

    @Test("rclone serve webdav: conditions ignored — not safe",
          .enabled(if: RequiredTool.rclone.isInstalledOrRequired, Comment(rawValue: RequiredTool.rclone.missingMessage)))
    func rcloneServe() async throws {
        let found = try await probe(.rclone)
        #expect(!found.honoursConditions)
        #expect(!found.isSafeForConditionalWrites)
    }
}
