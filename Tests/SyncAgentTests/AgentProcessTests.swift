import Foundation
import Glibc
import Testing
import TestSupport
@testable import SyncAgent

/// `clouddocsd` as users run it: real agent processes, a real Apache server started by the test,
/// documents open in other processes, and `clouddocs` commands.
@Suite("clouddocsd: two devices through a real Apache server", .serialized)
struct AgentProcessTests {
    @Test("an edit on A reaches B, and B's status, `clouddocs status` and `agent status` say it is in sync")
    func editTravels() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server)
            defer { devices.stop() }
            try Data("first\n".utf8).write(to: devices.file("A", "notes.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "notes.txt", holds: "first\n")
            try Data("second\n".utf8).write(to: devices.file("B", "notes.txt"))
            try await devices.waitUntil("A", "notes.txt", holds: "second\n")

            try await Polling.until("B's agent reports the item uploaded", details: devices.details) {
                let run = try devices.clouddocs("B", ["status", devices.file("B", "notes.txt").path])
                return run.output.contains("uploaded: true") && run.output.contains("provider: the sync agent")
            }
            let status = try devices.clouddocs("A", ["agent", "status"])
            #expect(status.status == 0)
            #expect(status.output.contains("agent: running"))
            #expect(status.output.contains("\(AgentDevices.container): "))
        }
    }

    @Test("pause, sync-now and resume are confirmed by the agent; while paused nothing travels")
    func pauseAndResume() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server)
            defer { devices.stop() }
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            let pause = try devices.clouddocs("A", ["agent", "pause"])
            #expect(pause.status == 0, "\(pause.errors)")
            try await Polling.until("A's status says paused", details: devices.details) { devices.status("A")?.state == .paused }
            try Data("while paused\n".utf8).write(to: devices.file("A", "p.txt"))
            // Nothing goes while paused: B's agent syncs (confirmed) and still has no p.txt.
            #expect(try devices.clouddocs("B", ["agent", "sync-now"]).status == 0)
            let handledBefore = devices.status("B")?.handledRequests.count ?? 0
            #expect(try devices.clouddocs("B", ["agent", "sync-now"]).status == 0)
            #expect((devices.status("B")?.handledRequests.count ?? 0) > handledBefore)
            #expect(!FileManager.default.fileExists(atPath: server.dataURL.appending(path: "\(AgentDevices.container)/Documents/p.txt").path))
            #expect(try devices.clouddocs("A", ["agent", "resume"]).status == 0)
            try await devices.waitUntil("B", "p.txt", holds: "while paused\n")
        }
    }

    @Test("a dirty open document on A saves before its upload: B gets the unsaved edit")
    func dirtyDocumentSavesFirst() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server)
            defer { devices.stop() }
            let url = devices.file("A", "doc.txt")
            try Data("v0".utf8).write(to: url)
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "doc.txt", holds: "v0")
            #expect(try devices.clouddocs("A", ["agent", "pause"]).status == 0)
            let editor = try ChildProcess(["remote-document", url.path], environment: ProcessInfo.processInfo.environment.merging(devices.environment("A")) { $1 })
            defer { editor.closeInput(); editor.waitForExit() }
            #expect(editor.expect("OPENED") != nil)
            // The file changes on disk (so the agent has something to upload) …
            try Data("v1".utf8).write(to: url)
            // … and the open document then holds an unsaved edit.
            editor.send("edit v2-unsaved")
            #expect(editor.expect("EDITED") != nil)
            editor.send("state")
            #expect(editor.readLine() == "STATE unsaved")
            #expect(try devices.clouddocs("A", ["agent", "resume"]).status == 0)
            try await devices.waitUntil("B", "doc.txt", holds: "v2-unsaved")
        }
    }

    @Test("a download while B's document has unsaved edits keeps them; once saved, the incoming bytes are a conflict version on both devices")
    func dirtyDocumentKeepsItsEdits() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server)
            defer { devices.stop() }
            try Data("base".utf8).write(to: devices.file("A", "doc.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "doc.txt", holds: "base")
            let urlB = devices.file("B", "doc.txt")
            let editor = try ChildProcess(["remote-document", urlB.path], environment: ProcessInfo.processInfo.environment.merging(devices.environment("B")) { $1 })
            #expect(editor.expect("OPENED base") != nil)
            editor.send("edit mine")
            #expect(editor.expect("EDITED") != nil)
            try Data("theirs".utf8).write(to: devices.file("A", "doc.txt"))
            // The download lands through a coordinated write; the open document keeps its edit.
            try await devices.waitUntil("B", "doc.txt", holds: "theirs")
            editor.send("state")
            #expect(editor.readLine() == "STATE unsaved")
            // Closing saves the edit over the downloaded bytes, which are kept as a conflict version.
            editor.closeInput()
            #expect(editor.readLine() == "CLOSED")
            editor.waitForExit()
            try await devices.waitUntil("A", "doc.txt", holds: "mine")
            for device in ["B", "A"] {
                try await Polling.until("\(device) lists a conflict version of doc.txt", details: devices.details) {
                    let run = try devices.clouddocs(device, ["conflicts", devices.file(device, "doc.txt").path])
                    return run.status == 0 && !run.output.isEmpty
                }
            }
        }
    }

    @Test("one agent per root: a second one refuses to start; after kill -9 a new one starts and goes on")
    func oneAgentPerRoot() async throws {
        try await WebDAVServer.with(.apache(fileETag: "Digest")) { server in
            let devices = try AgentDevices(server: server)
            defer { devices.stop() }
            try await devices.startAgent("A")
            let second = try ToolProcess.run(ChildProcess.builtProductURL("clouddocsd"), [], environment: devices.environment("A"))
            #expect(second.status == 1)
            #expect(second.output.contains("another clouddocsd already serves this root"))
            devices.killAgent("A")
            #expect(!AgentFolder(root: devices.root("A")).isAgentRunning)
            try Data("after restart\n".utf8).write(to: devices.file("A", "r.txt"))
            try await devices.startAgent("A")
            try await devices.startAgent("B")
            try await devices.waitUntil("B", "r.txt", holds: "after restart\n")
        }
    }

    @Test("a server that ignores If-Match is refused, saying why, and nothing is uploaded")
    func conditionIgnoringServerIsRefused() async throws {
        try await WebDAVServer.with(.rclone) { server in
            let devices = try AgentDevices(server: server)
            defer { devices.stop() }
            try Data("x".utf8).write(to: devices.file("A", "x.txt"))
            try await devices.startAgent("A")
            try await Polling.until("A's container is refused", details: devices.details) {
                if case .refused(let reason) = devices.status("A")?.state { return reason.contains("If-Match") }
                return false
            }
            #expect(!FileManager.default.fileExists(atPath: server.dataURL.appending(path: "\(AgentDevices.container)/Documents/x.txt").path))
            let status = try devices.clouddocs("A", ["agent", "status"])
            #expect(status.output.contains("refused"))
        }
    }
}
