import Foundation
import Glibc
import Testing
import TestSupport
import Ubiquity
@testable import SyncAgent

/// Files on demand with real agents and a real Apache: `clouddocs evict` and `clouddocs download`
/// as a user runs them.
@Suite("clouddocsd: evicting and downloading on request", .serialized)
struct AgentOnDemandTests {
    @Test("evict frees the file, leaves a placeholder and reports not downloaded; download brings back B's newer bytes; a dirty document is not evicted")
    func evictAndDownload() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-on-demand")
            defer { devices.stop() }
            let big = devices.file("A", "big.bin")
            var bytes = [UInt8](repeating: 0, count: 1 << 20)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2654435761 >> 13) }
            try Data(bytes).write(to: big)
            try Data("draft".utf8).write(to: devices.file("A", "doc.txt"))
            try Data("clean".utf8).write(to: devices.file("A", "clean.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "doc.txt", holds: "draft")
            try await Polling.until("big.bin is uploaded from A", details: devices.details) {
                try devices.clouddocs("A", ["status", big.path]).output.contains("uploaded: true")
                    && FileManager.default.fileExists(atPath: devices.file("B", "big.bin").path)
            }

            // A document with unsaved changes refuses the eviction (accommodatePresentedItemEviction)
            // and keeps them; the file stays as it was.
            let editor = try ChildProcess(["remote-document", devices.file("A", "doc.txt").path],
                                          environment: ProcessInfo.processInfo.environment.merging(devices.environment("A")) { $1 })
            defer { editor.closeInput(); editor.waitForExit() }
            #expect(editor.expect("OPENED") != nil)
            editor.send("edit unsaved words")
            #expect(editor.expect("EDITED") != nil)
            let refused = try devices.clouddocs("A", ["evict", devices.file("A", "doc.txt").path])
            #expect(refused.status != 0)
            #expect(refused.errors.contains("not evicted"), "\(refused.errors)")
            #expect(refused.errors.contains("unsaved changes"), "\(refused.errors)")
            #expect((try? String(contentsOf: devices.file("A", "doc.txt"), encoding: .utf8)) == "draft")
            editor.send("state")
            #expect(editor.readLine() == "STATE unsaved")

            // A clean document open in another process steps aside: it closes, and the file is evicted.
            let clean = devices.file("A", "clean.txt")
            try await Polling.until("clean.txt is uploaded from A", details: devices.details) {
                try devices.clouddocs("A", ["status", clean.path]).output.contains("uploaded: true")
            }
            let reader = try ChildProcess(["remote-document", clean.path],
                                          environment: ProcessInfo.processInfo.environment.merging(devices.environment("A")) { $1 })
            defer { reader.closeInput(); reader.waitForExit() }
            #expect(reader.expect("OPENED") != nil)
            let cleanEvicted = try devices.clouddocs("A", ["evict", clean.path])
            #expect(cleanEvicted.status == 0, "\(cleanEvicted.errors)")
            reader.send("state")
            #expect(reader.readLine() == "STATE closed")
            #expect(!FileManager.default.fileExists(atPath: clean.path))

            // Evicting the uploaded file.
            var before = stat()
            #expect(lstat(big.path, &before) == 0 && before.st_nlink == 1 && before.st_blocks >= 2048)
            let evicted = try devices.clouddocs("A", ["evict", big.path])
            #expect(evicted.status == 0, "\(evicted.errors)")
            #expect(!FileManager.default.fileExists(atPath: big.path))
            let placeholder = try #require(ItemPlaceholder.placeholderURL(forItemAt: big))
            var after = stat()
            // At least 99 % of the blocks are freed: the placeholder takes a block or two.
            #expect(lstat(placeholder.path, &after) == 0 && after.st_blocks * 100 <= before.st_blocks)
            #expect(try ItemPlaceholder.read(forItemAt: big)?.size == 1 << 20)
            let status = try devices.clouddocs("A", ["status", big.path])
            #expect(status.output.contains("downloaded: false"), "\(status.output)")

            // Changed on B meanwhile; A stays evicted until asked, then gets B's bytes.
            try Data("newer from B".utf8).write(to: devices.file("B", "big.bin"))
            try await Polling.until("B's change reaches the server", details: devices.details) {
                (try? String(contentsOf: server.dataURL.appending(path: "\(AgentDevices.container)/Documents/big.bin"), encoding: .utf8)) == "newer from B"
            }
            #expect(!FileManager.default.fileExists(atPath: big.path))
            let download = try devices.clouddocs("A", ["download", big.path])
            #expect(download.status == 0, "\(download.errors)")
            try await devices.waitUntil("A", "big.bin", holds: "newer from B")
            try await Polling.until("the placeholder is gone", details: devices.details) {
                !FileManager.default.fileExists(atPath: placeholder.path)
            }
            #expect(try devices.clouddocs("A", ["status", big.path]).output.contains("downloaded: true"))
        }
    }
}
