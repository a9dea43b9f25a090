import Foundation
import Glibc
import Testing
import TestSupport
import Ubiquity
@testable import SyncAgent

/// Files on demand, the reader's side, with real agents, a real Apache and `text-editor` as a
/// user runs it: opening an evicted document (a coordinated read) downloads it first.
@Suite("clouddocsd: an evicted document downloads when it is opened", .serialized)
struct AgentDownloadOnAccessTests {
    /// Two devices syncing `doc.txt` ("first"); the file is then evicted on A.
    private func evictedOnA(_ server: WebDAVServer, label: String) async throws -> AgentDevices {
        let devices = try AgentDevices(server: server, label: label)
        try Data("first".utf8).write(to: devices.file("A", "doc.txt"))
        try await devices.startAgent("A")
        try await devices.startAgent("B")
        try await devices.waitUntil("B", "doc.txt", holds: "first")
        try await Polling.until("doc.txt is uploaded from A", details: devices.details) {
            try devices.clouddocs("A", ["status", devices.file("A", "doc.txt").path]).output.contains("uploaded: true")
        }
        let evicted = try devices.clouddocs("A", ["evict", devices.file("A", "doc.txt").path])
        #expect(evicted.status == 0, "\(evicted.errors)")
        #expect(!FileManager.default.fileExists(atPath: devices.file("A", "doc.txt").path))
        return devices
    }

    private func textEditor(_ devices: AgentDevices, _ device: String, _ arguments: [String]) throws -> ToolRun {
        try runExampleTool("text-editor", arguments, in: devices.scratch.url, environment: devices.environment(device))
    }

    @Test("text-editor show of an evicted file waits for its download and shows B's newer bytes; append keeps them")
    func openDownloadsLatest() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try await evictedOnA(server, label: "download-on-open")
            defer { devices.stop() }
            let file = devices.file("A", "doc.txt")
            // Changed on B while evicted on A.
            try Data("newer from B\n".utf8).write(to: devices.file("B", "doc.txt"))
            try await Polling.until("B's change reaches the server", details: devices.details) {
                (try? String(contentsOf: server.dataURL.appending(path: "\(AgentDevices.container)/Documents/doc.txt"), encoding: .utf8)) == "newer from B\n"
            }
            let shown = try textEditor(devices, "A", ["show", file.path])
            #expect(shown.status == 0, "\(shown.errors)")
            #expect(shown.output == "newer from B\n")
            #expect(try String(contentsOf: file, encoding: .utf8) == "newer from B\n")
            try await Polling.until("the placeholder is gone", details: devices.details) {
                try ItemPlaceholder.read(forItemAt: file) == nil
            }

            // Evicted again: an append (a coordinated write that needs the bytes) downloads first
            // and adds to them — it never writes a new file over the server's copy.
            try await Polling.until("doc.txt is uploaded again", details: devices.details) {
                try devices.clouddocs("A", ["status", file.path]).output.contains("uploaded: true")
            }
            let again = try devices.clouddocs("A", ["evict", file.path])
            #expect(again.status == 0, "\(again.errors)")
            let appended = try textEditor(devices, "A", ["append", file.path, "line from A\n"])
            #expect(appended.status == 0, "\(appended.errors)")
            #expect(try String(contentsOf: file, encoding: .utf8) == "newer from B\nline from A\n")
            try await devices.waitUntil("B", "doc.txt", holds: "newer from B\nline from A\n")
        }
    }

    @Test("a synchronous read on the main thread of a process presenting the evicted file on its main queue: the landing write does not wait for that presenter")
    func mainThreadReadWithMainQueuePresenter() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try await evictedOnA(server, label: "download-main-thread")
            defer { devices.stop() }
            let file = devices.file("A", "doc.txt")
            let app = try ChildProcess(["main-thread-read", file.path],
                                       environment: ProcessInfo.processInfo.environment.merging(devices.environment("A")) { $1 },
                                       helper: "UbiquityTestHelper")
            #expect(app.expect("PRESENTING") == "PRESENTING")
            let read = app.expect("READ")
            #expect(read == "READ first", "\(read ?? "nothing")")
            #expect(app.expect("STOPPED") == "STOPPED")
            app.waitForExit()
            // The agent's landing write was answered for that presenter at once, not after its
            // answer limit ("did not answer … within"): the presenter was never asked.
            let log = (try? String(contentsOf: devices.scratch.url.appending(path: "agent-A.log"), encoding: .utf8)) ?? ""
            #expect(!log.contains("did not answer"), "\(log)")
        }
    }

    @Test("opening an evicted file fails clearly when the agent is not running or the server is offline; nothing is written")
    func openFailsClearly() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try await evictedOnA(server, label: "download-on-open-offline")
            defer { devices.stop() }
            let file = devices.file("A", "doc.txt")

            devices.killAgent("A")
            let noAgent = try textEditor(devices, "A", ["show", file.path])
            #expect(noAgent.status != 0)
            #expect(noAgent.errors.contains("only in the cloud"), "\(noAgent.errors)")
            #expect(noAgent.errors.contains("not running"), "\(noAgent.errors)")
            #expect(!noAgent.errors.contains("Error Domain"), "\(noAgent.errors)")
            #expect(!FileManager.default.fileExists(atPath: file.path))

            server.stop()
            try await devices.startAgent("A")
            let offline = try textEditor(devices, "A", ["show", file.path])
            #expect(offline.status != 0)
            #expect(offline.errors.contains("only in the cloud"), "\(offline.errors)")
            #expect(offline.errors.lowercased().contains("offline") || offline.errors.contains("reach"), "\(offline.errors)")
            #expect(!FileManager.default.fileExists(atPath: file.path))
            #expect(try ItemPlaceholder.read(forItemAt: file) != nil)
        }
    }
}
