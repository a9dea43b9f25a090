import Foundation
import LocalServers
import Glibc
import Testing
import TestSupport
@testable import SyncAgent

/// Faults with real `clouddocsd` processes and a real Apache: `kill -9` in the middle of a large
/// transfer, a server answering 503 for a while, and a mass deletion made by another device.
@Suite("clouddocsd under faults: kill -9 mid-transfer, 503, held mass deletions", .serialized,
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct AgentFaultTests {
    static let bigSize = 96 << 20

    /// Writes `size` bytes of a repeating, position-dependent pattern to `url`.
    static func writeBigFile(_ url: URL, size: Int) throws {
        var chunk = Data(count: 1 << 20)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        for block in 0..<(size >> 20) {
            chunk.withUnsafeMutableBytes { bytes in
                for index in stride(from: 0, to: bytes.count, by: 8) { bytes[index] = UInt8(truncatingIfNeeded: block &+ index >> 8) }
            }
            try handle.write(contentsOf: chunk)
        }
    }

    /// Size of the file at `url`, `nil` when missing.
    static func size(_ url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int
    }

    /// Whether the transfer of `path` on `device` is under way (some bytes moved, not all).
    static func midTransfer(_ devices: AgentDevices, _ device: String, _ path: String, upload: Bool) -> Bool {
        devices.status(device)?.transfers.contains { transfer in
            transfer.path == path && transfer.isUpload == upload && transfer.bytesDone > 0
                && transfer.bytesDone < Int64(bigSize)
        } == true
    }

    @Test("kill -9 mid-upload and mid-download of a large file: no partial file under the real name on either side; after a restart it completes once")
    func killedMidTransfer() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-fault-kill")
            defer { devices.stop() }
            let original = devices.scratch.url.appending(path: "big.bin")
            try Self.writeBigFile(original, size: Self.bigSize)
            try FileManager.default.copyItem(at: original, to: devices.file("A", "big.bin"))
            let serverFolder = server.dataURL.appending(path: "\(AgentDevices.container)/Documents")
            let onServer = serverFolder.appending(path: "big.bin")

            try await devices.startAgent("A")
            try await Polling.until("A's upload under way", interval: .milliseconds(5), details: devices.details) {
                Self.midTransfer(devices, "A", "Documents/big.bin", upload: true) || Self.size(onServer) != nil
            }
            devices.killAgent("A")
            // Apache writes a PUT to a temporary file and renames it: the real name is absent or whole.
            let partial = Self.size(onServer)
            #expect(partial == nil || partial == Self.bigSize, "the server shows \(partial ?? -1) bytes under the real name")

            try await devices.startAgent("A")
            try await Polling.until("the whole file on the server", details: devices.details) {
                Self.size(onServer) == Self.bigSize && devices.status("A")?.transfers.isEmpty == true
            }
            #expect(FileManager.default.contentsEqual(atPath: onServer.path, andPath: original.path))
            let names = try FileManager.default.contentsOfDirectory(atPath: serverFolder.path).filter { !$0.hasPrefix(".davfs") }
            #expect(names == ["big.bin"], "no duplicate on the server: \(names)")

            try await devices.startAgent("B")
            let onB = devices.file("B", "big.bin")
            try await Polling.until("B's download under way", interval: .milliseconds(5), details: devices.details) {
                Self.midTransfer(devices, "B", "Documents/big.bin", upload: false) || Self.size(onB) != nil
            }
            devices.killAgent("B")
            let local = Self.size(onB)
            #expect(local == nil || local == Self.bigSize, "B shows \(local ?? -1) bytes under the real name")
            try await devices.startAgent("B")
            try await Polling.until("the whole file on B", details: devices.details) {
                Self.size(onB) == Self.bigSize && devices.status("B")?.transfers.isEmpty == true
            }
            #expect(FileManager.default.contentsEqual(atPath: onB.path, andPath: original.path))
            let namesB = try FileManager.default.contentsOfDirectory(atPath: devices.documents("B").path)
            #expect(namesB == ["big.bin"], "no duplicate on B: \(namesB)")
            // Nothing left in the agent's transfers folder either.
            let transfers = devices.root("B").appending(path: ".clouddocsd/transfers/\(AgentDevices.container)")
            let left = (try? FileManager.default.contentsOfDirectory(atPath: transfers.path)) ?? []
            #expect(left.isEmpty, "left in transfers/: \(left)")
        }
    }

    @Test("a server answering 503: the status says offline, the change waits, and goes once the server serves again")
    func serverUnavailable() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-fault-503")
            defer { devices.stop() }
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await Polling.until("A idle", details: devices.details) { devices.status("A")?.state == .idle }
            try server.setUnavailable(true)
            try Data("written while the server is down\n".utf8).write(to: devices.file("A", "queued.txt"))
            try await Polling.until("A is offline", details: devices.details) {
                if case .offline = devices.status("A")?.state { return true }
                return false
            }
            // The agent tries again with back-off while the server stays down, and says
            // "syncing" during each try: the command is asked until it catches "offline".
            var status = ""
            try await Polling.until("`clouddocs agent status` says offline", details: { status }) {
                status = try devices.clouddocs("A", ["agent", "status"]).output
                return status.contains("offline")
            }
            #expect(!FileManager.default.fileExists(atPath: server.dataURL.appending(path: "\(AgentDevices.container)/Documents/queued.txt").path))
            try server.setUnavailable(false)
            #expect(try devices.clouddocs("A", ["agent", "sync-now"]).status == 0)
            try await devices.waitUntil("B", "queued.txt", holds: "written while the server is down\n")
        }
    }

    @Test("most files deleted on B: held on B until approved there, then held on A, shown by `agent status`, carried out after `approve-deletions`")
    func massDeletionIsHeld() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-fault-held")
            defer { devices.stop() }
            let names = (0..<10).map { "n\($0).txt" }
            for name in names { try Data("text of \(name)\n".utf8).write(to: devices.file("A", name)) }
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            for name in names { try await devices.waitUntil("B", name, holds: "text of \(name)\n") }
            for name in names.prefix(8) { try FileManager.default.removeItem(at: devices.file("B", name)) }
            // The device that deleted them holds them first: nothing reaches the server unapproved.
            try await Polling.until("B holds its own deletions", details: devices.details) {
                devices.status("B")?.heldDeletions.first { !$0.fromServer }?.count == 8
            }
            let onServer = server.dataURL.appending(path: "\(AgentDevices.container)/Documents")
            #expect(names.allSatisfy { FileManager.default.fileExists(atPath: onServer.appending(path: $0).path) })
            #expect(try devices.clouddocs("B", ["agent", "approve-deletions"]).status == 0)
            try await Polling.until("B deleted them on the server", details: devices.details) {
                names.prefix(8).allSatisfy { !FileManager.default.fileExists(atPath: onServer.appending(path: $0).path) }
            }
            // B's deletions reach the server one by one, and A polls meanwhile: a poll may see the
            // first few alone (below the guard's minimum of 5, so carried out) before the rest —
            // which are then held, as the deletions of the burst window count with them. Every
            // deletion A has not carried out is held.
            try await Polling.until("A holds the deletions", details: { devices.details() + "\nheld on A: \(String(describing: devices.status("A")?.heldDeletions))" }) {
                guard let held = devices.status("A")?.heldDeletions.first?.count, held >= 1 else { return false }
                let present = names.prefix(8).filter { FileManager.default.fileExists(atPath: devices.file("A", $0).path) }.count
                return held == present
            }
            #expect(names.suffix(2).allSatisfy { FileManager.default.fileExists(atPath: devices.file("A", $0).path) })
            let heldCount = devices.status("A")?.heldDeletions.first?.count ?? 0
            let status = try devices.clouddocs("A", ["agent", "status"])
            #expect(status.output.contains("held: \(heldCount) deletions"), "\(status.output)")
            #expect(try devices.clouddocs("A", ["agent", "approve-deletions"]).status == 0)
            try await Polling.until("A carried them out", details: devices.details) {
                names.prefix(8).allSatisfy { !FileManager.default.fileExists(atPath: devices.file("A", $0).path) }
                    && devices.status("A")?.heldDeletions.isEmpty == true
            }
            #expect(names.suffix(2).allSatisfy { FileManager.default.fileExists(atPath: devices.file("A", $0).path) })
        }
    }

    @Test("the server stopped and started again (same port, same folder): offline meanwhile, then the change made meanwhile travels")
    func serverRestarted() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-fault-restart")
            defer { devices.stop() }
            try Data("before\n".utf8).write(to: devices.file("A", "before.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "before.txt", holds: "before\n")
            server.stop()
            try Data("made while the server was stopped\n".utf8).write(to: devices.file("A", "meanwhile.txt"))
            try await Polling.until("A is offline", details: devices.details) {
                if case .offline = devices.status("A")?.state { return true }
                return false
            }
            // The same Apache again: its configuration (port, data folder) is still in its folder.
            // Spawned as the fixture spawns servers (own process group, default signal handling), so
            // stopping it stops its workers too.
            let restarted = try SpawnedServer(executable: RequiredTool.apache2.require(),
                                              arguments: ["-f", server.workURL.appending(path: "httpd.conf").path, "-DFOREGROUND"],
                                              environment: [:], logURL: server.workURL.appending(path: "restarted.log"))
            defer { restarted.stop() }
            for device in ["A", "B"] { _ = try devices.clouddocs(device, ["agent", "sync-now"]) }
            try await devices.waitUntil("B", "meanwhile.txt", holds: "made while the server was stopped\n")
            #expect((try? String(contentsOf: devices.file("A", "before.txt"), encoding: .utf8)) == "before\n")
            #expect(devices.status("A")?.lastErrors.contains { $0.message.contains("conflict") } != true)
        }
    }

    /// `cp -a source destination` (ownership and times kept: Apache's workers must still own it).
    static func copyKeepingOwners(_ source: URL, _ destination: URL) throws {
        let run = try ToolProcess.run(URL(fileURLWithPath: "/bin/cp"), ["-a", source.path, destination.path])
        guard run.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: run.output]) }
    }

    @Test("the server's folder swapped for an older copy: nothing deleted on either side, the newer edit kept as a conflict version")
    func serverRolledBack() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-fault-rollback")
            defer { devices.stop() }
            try Data("kept\n".utf8).write(to: devices.file("A", "keep.txt"))
            try Data("first version\n".utf8).write(to: devices.file("A", "edited.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "edited.txt", holds: "first version\n")
            try await devices.waitUntil("B", "keep.txt", holds: "kept\n")
            let backup = devices.scratch.url.appending(path: "server-backup")
            try Self.copyKeepingOwners(server.dataURL, backup)

            try Data("second version\n".utf8).write(to: devices.file("A", "edited.txt"))
            try Data("made after the backup\n".utf8).write(to: devices.file("A", "new.txt"))
            try await devices.waitUntil("B", "edited.txt", holds: "second version\n")
            try await devices.waitUntil("B", "new.txt", holds: "made after the backup\n")

            server.stop()
            try FileManager.default.removeItem(at: server.dataURL)
            try Self.copyKeepingOwners(backup, server.dataURL)
            // Spawned as the fixture spawns servers (own process group, default signal handling), so
            // stopping it stops its workers too.
            let restarted = try SpawnedServer(executable: RequiredTool.apache2.require(),
                                              arguments: ["-f", server.workURL.appending(path: "httpd.conf").path, "-DFOREGROUND"],
                                              environment: [:], logURL: server.workURL.appending(path: "restarted.log"))
            defer { restarted.stop() }
            for device in ["A", "B"] { _ = try devices.clouddocs(device, ["agent", "sync-now"]) }

            // The file made after the backup goes back to the server; nothing is deleted anywhere.
            let onServer = server.dataURL.appending(path: "\(AgentDevices.container)/Documents")
            try await Polling.until("new.txt back on the server", details: devices.details) {
                (try? String(contentsOf: onServer.appending(path: "new.txt"), encoding: .utf8)) == "made after the backup\n"
            }
            for device in ["A", "B"] {
                try await Polling.until("\(device) lists a conflict version of edited.txt", details: devices.details) {
                    let run = try devices.clouddocs(device, ["conflicts", devices.file(device, "edited.txt").path])
                    return run.status == 0 && !run.output.isEmpty
                }
                for name in ["keep.txt", "new.txt", "edited.txt"] {
                    #expect(FileManager.default.fileExists(atPath: devices.file(device, name).path), "\(name) on \(device)")
                }
            }
            // The second version survives: current somewhere or in the server's conflict area.
            let conflictArea = server.dataURL.appending(path: "\(AgentDevices.container)/\(SyncExclusions.conflictArea)")
            #expect(AgentFaultConcurrentEditTests.files(under: conflictArea)
                .contains { (try? String(contentsOf: $0, encoding: .utf8)) == "second version\n" })
        }
    }
}
