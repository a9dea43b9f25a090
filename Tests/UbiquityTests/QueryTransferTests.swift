import FileCoordination
import Foundation
import Glibc
import Testing
import TestSupport
@testable import Ubiquity

/// Live transfer states in metadata queries: for a container the sync agent serves, what its
/// status says (queued, downloading 40 %, uploading) becomes a change of the same result, and the
/// end of the transfer another.
@Suite("Metadata queries: the agent's transfers and their progress")
struct QueryTransferTests {
    /// Publishes `status` as the agent does (replaced atomically in `ROOT/.clouddocsd/status/`).
    private func publish(_ status: ContainerSyncStatus, root: URL) throws {
        let folder = AgentFolder(root: root)
        try FileManager.default.createDirectory(at: folder.statusFolder, withIntermediateDirectories: true)
        let data = try JSONEncoder.agent.encode(status)
        let temporary = folder.statusFolder.appending(path: ".\(status.identifier).json.tmp")
        try data.write(to: temporary)
        _ = rename(temporary.path, folder.statusFile(for: status.identifier).path)
    }

    /// Stands for a running agent: holds the write lock on `agent.lock` (the query reads a
    /// status only while an agent runs) until the returned descriptor is closed.
    private func pretendAgentRuns(root: URL) throws -> Int32 {
        let folder = AgentFolder(root: root)
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let fd = open(folder.lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0 && OFDLock.apply(.exclusive, fd: fd, start: 0, length: 1, wait: false) == .done)
        return fd
    }

    private func status(transfers: [ItemTransfer] = [], queued: [QueuedItem] = []) -> ContainerSyncStatus {
        ContainerSyncStatus(identifier: "com.example.notes", server: "http://127.0.0.1/", state: .syncing,
                            queued: queued, transfers: transfers)
    }

    @Test("an evicted item goes not downloaded → downloading 40 % → downloaded, each a change of the same result")
    func downloadProgress() throws {
        let cloud = try ScratchCloud(provider: .agent)
        defer { cloud.remove() }
        let file = try cloud.documents().appending(path: "big.bin")
        try ItemPlaceholder(name: "big.bin", size: 1000, modificationDate: Date()).write(besideItemAt: file)
        try publish(status(), root: cloud.root)
        let agent = try pretendAgentRuns(root: cloud.root)
        defer { close(agent) }

        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.ubiquitousDocuments], account: cloud.account)
        defer { query.stop() }
        let evicted = try #require(query.results.first)
        #expect(evicted.isEvicted && evicted.value(of: .isDownloading) as? Bool == false)

        try publish(status(transfers: [ItemTransfer(path: "Documents/big.bin", isUpload: false, bytesDone: 400, bytesTotal: 1000)]),
                    root: cloud.root)
        #expect(recorder.waitForUpdates { update in
            update.changed.contains { $0.id == evicted.id && $0.value(of: .isDownloading) as? Bool == true
                && $0.value(of: .percentDownloaded) as? Double == 40 }
        })
        // Landed: the file is in place, the placeholder goes, the transfer leaves the status.
        try Data(count: 1000).write(to: file)
        try ItemPlaceholder.remove(forItemAt: file)
        try publish(status(), root: cloud.root)
        #expect(recorder.waitForUpdates { update in
            update.changed.contains { $0.id == evicted.id && !$0.isEvicted && $0.value(of: .isDownloading) as? Bool == false
                && $0.value(of: .downloadingStatus) as? String == UbiquitousItemStatus.DownloadingStatus.current.rawValue }
        })
        #expect(recorder.merged.removed.isEmpty && recorder.merged.added.isEmpty)
    }

    @Test("a queued upload is not uploaded; uploading shows its percent; then uploaded")
    func uploadProgress() throws {
        let cloud = try ScratchCloud(provider: .agent)
        defer { cloud.remove() }
        let file = try cloud.documents().appending(path: "notes.txt")
        try Data("notes".utf8).write(to: file)
        try publish(status(queued: [QueuedItem(path: "Documents/notes.txt", action: .upload)]), root: cloud.root)
        let agent = try pretendAgentRuns(root: cloud.root)
        defer { close(agent) }

        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.ubiquitousDocuments], account: cloud.account)
        defer { query.stop() }
        let item = try #require(query.results.first)
        #expect(item.value(of: .isUploaded) as? Bool == false && item.value(of: .percentUploaded) as? Double == 0)

        try publish(status(transfers: [ItemTransfer(path: "Documents/notes.txt", isUpload: true, bytesDone: 1, bytesTotal: 4)]),
                    root: cloud.root)
        #expect(recorder.waitForUpdates { update in
            update.changed.contains { $0.id == item.id && $0.value(of: .isUploading) as? Bool == true
                && $0.value(of: .percentUploaded) as? Double == 25 }
        })
        try publish(status(), root: cloud.root)
        #expect(recorder.waitForUpdates { update in
            update.changed.contains { $0.id == item.id && $0.value(of: .isUploaded) as? Bool == true
                && $0.value(of: .isUploading) as? Bool == false }
        })
    }
}

@Suite("Metadata queries: transfer states from any status")
struct ItemTransferStateTests {
    @Test("absurd byte counts in a status give 0–100, never a trap")
    func absurdNumbers() {
        let status = ContainerSyncStatus(identifier: "c", server: "", state: .syncing, transfers: [
            ItemTransfer(path: "a", isUpload: false, bytesDone: .min, bytesTotal: 1),
            ItemTransfer(path: "b", isUpload: true, bytesDone: .max, bytesTotal: 1),
            ItemTransfer(path: "c", isUpload: false, bytesDone: 5, bytesTotal: nil),
        ])
        let states = ItemTransferState.states(from: status, containerPath: "/x")
        #expect(states["/x/a"]?.percent == 0)
        #expect(states["/x/b"]?.percent == 100)
        #expect(states["/x/c"]?.kind == .downloading)
    }
}
