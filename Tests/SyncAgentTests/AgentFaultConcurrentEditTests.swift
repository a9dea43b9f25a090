import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// Servers whose tags alone cannot guard a write — Apache's default `FileETag MTime Size` (tags
/// weak for a second after a write) and WsgiDAV (a same-size rewrite within a second keeps the
/// tag) — run the engine's safe mode. Two real `clouddocsd` processes edit the same document
/// while neither knows of the other's edit: the result must be a conflict version, never a silent
/// overwrite.
@Suite("clouddocsd safe mode: concurrent edits through servers with weak or same-second tags", .serialized)
struct AgentFaultConcurrentEditTests {
    @Test("concurrent same-size edits end as one current version plus a conflict version; the status names the safe mode",
          arguments: [WebDAVServer.Kind.apache(fileETag: "MTime Size"), .wsgidav])
    func concurrentEditsBecomeAConflict(kind: WebDAVServer.Kind) async throws {
        try await WebDAVServer.with(kind) { server in
            let devices = try AgentDevices(server: server, label: "agent-safe-mode")
            defer { devices.stop() }
            try Data("base-0".utf8).write(to: devices.file("A", "doc.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "doc.txt", holds: "base-0")
            let status = try devices.clouddocs("A", ["agent", "status"])
            #expect(status.output.contains("safe mode:"), "\(status.output)")

            // Both edit while neither agent moves anything: same size as each other and as the base,
            // so a tag made of mtime seconds and size cannot tell them apart.
            for device in ["A", "B"] {
                #expect(try devices.clouddocs(device, ["agent", "pause"]).status == 0)
                try await Polling.until("\(device) is paused", details: devices.details) { devices.status(device)?.state == .paused }
            }
            try Data("edit-A".utf8).write(to: devices.file("A", "doc.txt"))
            try Data("edit-B".utf8).write(to: devices.file("B", "doc.txt"))

            // A goes first (Apache checks If-Match and writes without a lock between them, so two
            // uploads at the very same moment are the server's race, not the one tested here).
            let onServer = server.dataURL.appending(path: "\(AgentDevices.container)/Documents/doc.txt")
            #expect(try devices.clouddocs("A", ["agent", "resume"]).status == 0)
            try await Polling.until("the server holds A's edit", details: devices.details) {
                (try? String(contentsOf: onServer, encoding: .utf8)) == "edit-A"
            }
            #expect(try devices.clouddocs("B", ["agent", "resume"]).status == 0)

            // B's upload is refused (its base tag is gone): B's edit becomes a conflict version,
            // A's edit stays current on both devices, and B's bytes reach the server's conflict area.
            try await devices.waitUntil("B", "doc.txt", holds: "edit-A")
            for device in ["B", "A"] {
                try await Polling.until("\(device) lists a conflict version of doc.txt", details: devices.details) {
                    let run = try devices.clouddocs(device, ["conflicts", devices.file(device, "doc.txt").path])
                    return run.status == 0 && !run.output.isEmpty
                }
            }
            #expect((try? String(contentsOf: onServer, encoding: .utf8)) == "edit-A")
            #expect((try? String(contentsOf: devices.file("A", "doc.txt"), encoding: .utf8)) == "edit-A")
            #expect(Self.files(under: server.dataURL.appending(path: "\(AgentDevices.container)/\(SyncExclusions.conflictArea)"))
                .contains { (try? String(contentsOf: $0, encoding: .utf8)) == "edit-B" })
        }
    }

    @Test("a server whose listings carry no ETag is refused, saying why")
    func serverWithoutTagsIsRefused() {
        let noTags = RemoteCapabilities(honoursConditions: true, strongTagsImmediately: false, tagChangesOnEveryWrite: false,
                                        folderTagsPropagate: false, hasFileIDs: false, tagInWriteResponse: false, hasTags: false)
        #expect(Agent.refusal(of: noTags)?.contains("no ETag") == true)
        let weak = RemoteCapabilities(honoursConditions: true, strongTagsImmediately: false, tagChangesOnEveryWrite: true,
                                      folderTagsPropagate: false, hasFileIDs: false, tagInWriteResponse: false)
        #expect(Agent.refusal(of: weak) == nil)
        #expect(Agent.serverDescription("http://h/c/", weak).contains("safe mode: tags weak"))
        let digest = RemoteCapabilities(honoursConditions: true, strongTagsImmediately: true, tagChangesOnEveryWrite: true,
                                        folderTagsPropagate: false, hasFileIDs: false, tagInWriteResponse: false)
        #expect(Agent.serverDescription("http://h/c/", digest) == "http://h/c/")
    }

    /// Every regular file below `folder`.
    static func files(under folder: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }
}
