import Foundation
import Glibc
import Testing
import TestSupport
import Ubiquity
@testable import SyncAgent

/// Files on demand with real agents and a real Apache, the agent's side of a download asked for:
/// answered when it cannot happen (offline), carried over a `kill -9` of the agent, the server
/// deleting or changing an evicted item, pins and folders as `clouddocs` users run them.
@Suite("clouddocsd: download requests, pins and folders", .serialized,
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct AgentOnDemandRequestTests {
    static let relative = "Documents/"

    /// Starts A and B, writes `files` on A and waits until B has them all (so they are uploaded).
    private func synced(_ devices: AgentDevices, _ files: [String: String]) async throws {
        for (name, text) in files {
            let url = devices.file("A", name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try await devices.startAgent("A")
        try await devices.startAgent("B")
        for (name, text) in files { try await devices.waitUntil("B", name, holds: text) }
    }

    /// Leaves a download request for `name` as an app's coordinated read does, and returns it.
    private func askForDownload(_ devices: AgentDevices, _ name: String) throws -> AgentRequest {
        let request = AgentRequest(command: .download, container: AgentDevices.container, path: Self.relative + name)
        try AgentFolder(root: devices.root("A")).send(request)
        return request
    }

    @Test("offline: a download request is answered with a reason that says offline, soon; the item stays queued and arrives when the server is back")
    func refusedWhenOffline() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-download-offline")
            defer { devices.stop() }
            try await synced(devices, ["a.txt": "from the cloud", "here.txt": "here"])
            let evicted = try devices.clouddocs("A", ["evict", devices.file("A", "a.txt").path])
            #expect(evicted.status == 0, "\(evicted.errors)")

            try server.setUnavailable(true)
            let request = try askForDownload(devices, "a.txt")
            try await Polling.until("the request is answered", details: devices.details) {
                devices.status("A")?.refusedRequests?[request.id] != nil
            }
            let reason = devices.status("A")?.refusedRequests?[request.id] ?? ""
            #expect(reason.contains("offline"), "\(reason)")
            #expect(!FileManager.default.fileExists(atPath: devices.file("A", "a.txt").path))
            // An item already here is handled at once, and not refused.
            let here = try askForDownload(devices, "here.txt")
            try await Polling.until("the request for an item already here is handled", details: devices.details) {
                devices.status("A")?.handledRequests.contains(here.id) == true
            }
            #expect(devices.status("A")?.refusedRequests?[here.id] == nil)

            try server.setUnavailable(false)
            try await devices.waitUntil("A", "a.txt", holds: "from the cloud")
            try await Polling.until("the placeholder is gone", details: devices.details) {
                ((try? ItemPlaceholder.read(forItemAt: devices.file("A", "a.txt"))) ?? nil) == nil
            }
        }
    }

    @Test("an agent that starts while the server is offline answers a download request with offline, and downloads the item once the server is back")
    func refusedWhileConnecting() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-download-connecting")
            defer { devices.stop() }
            try await synced(devices, ["a.txt": "from the cloud"])
            let evicted = try devices.clouddocs("A", ["evict", devices.file("A", "a.txt").path])
            #expect(evicted.status == 0, "\(evicted.errors)")
            devices.killAgent("A")
            try server.setUnavailable(true)
            try await devices.startAgent("A")
            let request = try askForDownload(devices, "a.txt")
            try await Polling.until("the request is answered", details: devices.details) {
                devices.status("A")?.refusedRequests?[request.id] != nil
            }
            let reason = devices.status("A")?.refusedRequests?[request.id] ?? ""
            #expect(reason.contains("offline"), "\(reason)")
            try server.setUnavailable(false)
            try await devices.waitUntil("A", "a.txt", holds: "from the cloud")
        }
    }

    @Test("kill -9 of the agent while a 64 MiB download it was asked for is under way: never a partial file under its name, the placeholder stays until the file is whole, and the restarted agent finishes it")
    func restartResumesDownload() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-download-kill")
            defer { devices.stop() }
            let size = 64 << 20
            let big = devices.file("A", "big.bin")
            try AgentFaultTests.writeBigFile(big, size: size)
            let onServer = server.dataURL.appending(path: "\(AgentDevices.container)/Documents/big.bin")
            try await devices.startAgent("A")
            // 64 MiB up, then Apache's MD5 of it for the tag: minutes on a loaded machine (a hang guard only).
            try await Polling.until("big.bin uploaded", timeout: .seconds(600), details: devices.details) {
                try devices.clouddocs("A", ["status", big.path]).output.contains("uploaded: true")
                    && ((try? FileManager.default.attributesOfItem(atPath: onServer.path)[.size] as? Int) ?? 0) == size
            }
            let evicted = try devices.clouddocs("A", ["evict", big.path])
            #expect(evicted.status == 0, "\(evicted.errors)")
            let placeholder = try #require(ItemPlaceholder.placeholderURL(forItemAt: big))

            let path = Self.relative + "big.bin"
            _ = try askForDownload(devices, "big.bin")
            try await Polling.until("the download under way", interval: .milliseconds(2), details: devices.details) {
                devices.status("A")?.transfers.contains { $0.path == path && !$0.isUpload && $0.bytesDone > 0 } == true
                    || FileManager.default.fileExists(atPath: big.path)
            }
            devices.killAgent("A")
            var info = stat()
            if lstat(big.path, &info) == 0 {
                #expect(Int(info.st_size) == size, "a partial file under the real name: \(info.st_size) bytes")
            } else {
                #expect(FileManager.default.fileExists(atPath: placeholder.path), "neither the file nor its placeholder")
            }

            // The request was saved: the restarted agent downloads it without being asked again.
            try await devices.startAgent("A")
            try await Polling.until("big.bin whole and its placeholder gone", timeout: .seconds(600), details: devices.details) {
                !FileManager.default.fileExists(atPath: placeholder.path)
                    && ((try? FileManager.default.attributesOfItem(atPath: big.path)[.size] as? Int) ?? 0) == size
            }
            #expect(FileManager.default.contentsEqual(atPath: big.path, andPath: onServer.path))
        }
    }

    @Test("the server deletes an evicted item: its placeholder goes on A; the server changes one: A's placeholder shows the new size")
    func serverDeletesOrChanges() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-evicted-server-change")
            defer { devices.stop() }
            try await synced(devices, ["gone.txt": "short", "changed.txt": "short", "keep1.txt": "k", "keep2.txt": "k"])
            for name in ["gone.txt", "changed.txt"] {
                let run = try devices.clouddocs("A", ["evict", devices.file("A", name).path])
                #expect(run.status == 0, "\(run.errors)")
            }
            try FileManager.default.removeItem(at: devices.file("B", "gone.txt"))
            let longer = "a much longer text written on B"
            try Data(longer.utf8).write(to: devices.file("B", "changed.txt"))
            try await Polling.until("A's placeholders follow the server", details: devices.details) {
                let gone = (try? ItemPlaceholder.read(forItemAt: devices.file("A", "gone.txt"))) ?? nil
                let changed = (try? ItemPlaceholder.read(forItemAt: devices.file("A", "changed.txt"))) ?? nil
                return gone == nil && !FileManager.default.fileExists(atPath: devices.file("A", "gone.txt").path)
                    && changed?.size == Int64(longer.utf8.count)
            }
            #expect(!FileManager.default.fileExists(atPath: devices.file("A", "gone.txt").path))
            #expect(!FileManager.default.fileExists(atPath: devices.file("A", "changed.txt").path))
            let status = try devices.clouddocs("A", ["status", devices.file("A", "changed.txt").path])
            #expect(status.output.contains("downloaded: false"), "\(status.output)")
        }
    }

    @Test("clouddocs pin downloads an evicted item and keeps it from eviction; unpin allows it; evict and download accept folders")
    func pinsAndFolders() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-pins-folders")
            defer { devices.stop() }
            try await synced(devices, ["Notes/one.txt": "one", "Notes/Old/two.txt": "two", "solo.txt": "solo"])
            let folder = devices.file("A", "Notes")
            let evict = try devices.clouddocs("A", ["evict", folder.path])
            #expect(evict.status == 0, "\(evict.errors)")
            for name in ["Notes/one.txt", "Notes/Old/two.txt"] {
                #expect(!FileManager.default.fileExists(atPath: devices.file("A", name).path))
                #expect(try ItemPlaceholder.read(forItemAt: devices.file("A", name)) != nil)
            }
            let download = try devices.clouddocs("A", ["download", folder.path])
            #expect(download.status == 0, "\(download.errors)")
            try await devices.waitUntil("A", "Notes/one.txt", holds: "one")
            try await devices.waitUntil("A", "Notes/Old/two.txt", holds: "two")

            let solo = devices.file("A", "solo.txt")
            #expect(try devices.clouddocs("A", ["evict", solo.path]).status == 0)
            let pin = try devices.clouddocs("A", ["pin", solo.path])
            #expect(pin.status == 0, "\(pin.errors)")
            try await devices.waitUntil("A", "solo.txt", holds: "solo")
            let refused = try devices.clouddocs("A", ["evict", solo.path])
            #expect(refused.status != 0 && refused.errors.contains("pinned"), "\(refused.errors)")
            #expect(FileManager.default.fileExists(atPath: solo.path))
            #expect(try devices.clouddocs("A", ["unpin", solo.path]).status == 0)
            let evictedNow = try devices.clouddocs("A", ["evict", solo.path])
            #expect(evictedNow.status == 0, "\(evictedNow.errors)")
            #expect(!FileManager.default.fileExists(atPath: solo.path))
        }
    }

    @Test("clouddocs evict of a package document: one placeholder for the whole package, nothing under its name; download brings it back whole")
    func packageEvictedWhole() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server, label: "agent-package-on-demand", extraConfiguration: "package-extensions = cdpkg")
            defer { devices.stop() }
            let package = devices.file("A", "Doc.cdpkg")
            try FileManager.default.createDirectory(at: package.appending(path: "media"), withIntermediateDirectories: true)
            try Data("index".utf8).write(to: package.appending(path: "index.txt"))
            try Data("picture bytes".utf8).write(to: package.appending(path: "media/p.bin"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await Polling.until("the package on B", details: devices.details) {
                (try? String(contentsOf: devices.file("B", "Doc.cdpkg/media/p.bin"), encoding: .utf8)) == "picture bytes"
            }
            try await Polling.until("the package uploaded from A", details: devices.details) {
                try devices.clouddocs("A", ["status", package.path]).output.contains("uploaded: true")
            }
            let evicted = try devices.clouddocs("A", ["evict", package.path])
            #expect(evicted.status == 0, "\(evicted.errors)")
            #expect(!FileManager.default.fileExists(atPath: package.path))
            let placeholder = try #require(try ItemPlaceholder.read(forItemAt: package))
            #expect(placeholder.isPackage && placeholder.size == 18)
            let download = try devices.clouddocs("A", ["download", package.path])
            #expect(download.status == 0, "\(download.errors)")
            try await Polling.until("the package back whole on A", details: devices.details) {
                (try? String(contentsOf: package.appending(path: "media/p.bin"), encoding: .utf8)) == "picture bytes"
                    && (try? String(contentsOf: package.appending(path: "index.txt"), encoding: .utf8)) == "index"
                    && ((try? ItemPlaceholder.read(forItemAt: package)) ?? nil) == nil
            }
        }
    }
}
