import FileCoordination
import Foundation
import Glibc
import Testing
import TestSupport
@testable import Ubiquity

/// The agent's folder as apps see it: the published status, the running test, requests, and the
/// provider's answers from them.
@Suite("Agent folder and the agent provider")
struct AgentFolderTests {
    @Test("a status written by the agent is read back; a missing, garbled or huge one reads as none")
    func statusRoundTrip() throws {
        try Scratch.with("agent-folder") { root in
            let folder = AgentFolder(root: root)
            #expect(folder.status(of: "com.example.notes") == nil)
            try FileManager.default.createDirectory(at: folder.statusFolder, withIntermediateDirectories: true)
            var status = ContainerSyncStatus(identifier: "com.example.notes", server: "http://127.0.0.1:1/dav", state: .idle,
                                             scannedThrough: Date(timeIntervalSince1970: 1_000_000))
            status.transfers = [ItemTransfer(path: "Documents/a.txt", isUpload: true, bytesDone: 50, bytesTotal: 200)]
            try JSONEncoder.agent.encode(status).write(to: folder.statusFile(for: "com.example.notes"))
            #expect(folder.status(of: "com.example.notes") == status)
            try Data("{ not json".utf8).write(to: folder.statusFile(for: "com.example.notes"))
            #expect(folder.status(of: "com.example.notes") == nil)
            try Data(count: AgentFolder.maximumStatusSize + 1).write(to: folder.statusFile(for: "com.example.notes"))
            #expect(folder.status(of: "com.example.notes") == nil)
        }
    }

    @Test("the agent counts as running exactly while another open file description write-locks agent.lock")
    func runningTest() throws {
        try Scratch.with("agent-lock") { root in
            let folder = AgentFolder(root: root)
            #expect(!folder.isAgentRunning)
            try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
            let fd = open(folder.lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            #expect(!folder.isAgentRunning)
            #expect(OFDLock.apply(.exclusive, fd: fd, start: 0, length: 1, wait: false) == .done)
            #expect(folder.isAgentRunning)
            close(fd)
            #expect(!folder.isAgentRunning)
        }
    }

    @Test("the provider reports uploading with percent, queued, conflicts, and uploaded items from the status")
    func providerReadsTheStatus() throws {
        try Scratch.with("agent-provider") { root in
            let folder = AgentFolder(root: root)
            let container = UbiquityContainer(identifier: "com.example.notes", url: root.appending(path: "com.example.notes", directoryHint: .isDirectory))
            try FileManager.default.createDirectory(at: container.documentsURL, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: folder.statusFolder, withIntermediateDirectories: true)
            let names = ["up.txt", "queued.txt", "conflict.txt", "done.txt", "later.txt"]
            for name in names { try Data(name.utf8).write(to: container.documentsURL.appending(path: name)) }
            var status = ContainerSyncStatus(identifier: container.identifier, server: "s", state: .syncing, scannedThrough: Date())
            status.transfers = [ItemTransfer(path: "Documents/up.txt", isUpload: true, bytesDone: 1, bytesTotal: 4)]
            status.queued = [QueuedItem(path: "Documents/queued.txt", action: .upload)]
            status.conflicted = ["Documents/conflict.txt"]
            try JSONEncoder.agent.encode(status).write(to: folder.statusFile(for: container.identifier))
            // Changed after the agent's last look: not uploaded.
            let later = container.documentsURL.appending(path: "later.txt")
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(3600)], ofItemAtPath: later.path)

            let provider = SyncAgentProvider()
            // No agent running: nothing is uploaded.
            #expect(provider.status(ofItemAt: container.documentsURL.appending(path: "done.txt"), in: container).isUploaded == false)

            let fd = open(folder.lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            defer { close(fd) }
            #expect(OFDLock.apply(.exclusive, fd: fd, start: 0, length: 1, wait: false) == .done)
            let up = provider.status(ofItemAt: container.documentsURL.appending(path: "up.txt"), in: container)
            #expect(up.isUploading && !up.isUploaded && up.percentUploaded == 25)
            let queued = provider.status(ofItemAt: container.documentsURL.appending(path: "queued.txt"), in: container)
            #expect(!queued.isUploaded && !queued.isUploading)
            #expect(provider.status(ofItemAt: container.documentsURL.appending(path: "conflict.txt"), in: container).hasUnresolvedConflicts)
            let done = provider.status(ofItemAt: container.documentsURL.appending(path: "done.txt"), in: container)
            #expect(done.isUploaded && done.downloadingStatus == .current)
            #expect(!provider.status(ofItemAt: later, in: container).isUploaded)
        }
    }

    @Test("a request is left whole, and the agent folder is not a container")
    func requests() throws {
        try Scratch.with("agent-request") { root in
            let folder = AgentFolder(root: root)
            #expect(throws: UbiquityError.self) { try folder.send(AgentRequest(command: .pause)) }
            try FileManager.default.createDirectory(at: folder.requestsFolder, withIntermediateDirectories: true)
            let request = AgentRequest(command: .syncNow, container: "com.example.notes")
            try folder.send(request)
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.requestsFolder.path)
            #expect(names == [request.id + ".request"])
            let data = try Data(contentsOf: folder.requestsFolder.appending(path: names[0]))
            #expect(try JSONDecoder.agent.decode(AgentRequest.self, from: data) == request)
        }
    }

    @Test("a FIFO where the status file or agent.lock should be is read as none, without blocking")
    func fifosDoNotBlock() throws {
        try Scratch.with("agent-fifo") { root in
            let folder = AgentFolder(root: root)
            try FileManager.default.createDirectory(at: folder.statusFolder, withIntermediateDirectories: true)
            #expect(mkfifo(folder.statusFile(for: "com.example.notes").path, 0o600) == 0)
            #expect(mkfifo(folder.lockFile.path, 0o600) == 0)
            #expect(folder.status(of: "com.example.notes") == nil)
            #expect(!folder.isAgentRunning)
        }
    }

    @Test("a symbolic link in place of the status file is not followed")
    func statusSymlinkNotFollowed() throws {
        try Scratch.with("agent-link") { root in
            let folder = AgentFolder(root: root)
            try FileManager.default.createDirectory(at: folder.statusFolder, withIntermediateDirectories: true)
            let status = ContainerSyncStatus(identifier: "com.example.notes", server: "http://127.0.0.1:1/dav", state: .idle,
                                             scannedThrough: Date(timeIntervalSince1970: 1_000_000))
            let elsewhere = root.appending(path: "elsewhere.json")
            try JSONEncoder.agent.encode(status).write(to: elsewhere)
            #expect(symlink(elsewhere.path, folder.statusFile(for: "com.example.notes").path) == 0)
            #expect(folder.status(of: "com.example.notes") == nil)
        }
    }
}
