import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// Files on demand in metadata queries: an evicted item is listed under its real name with its
/// size and dates, not downloaded; eviction and download are changes of the same result.
@Suite("Metadata queries: evicted items")
struct QueryEvictedItemTests {
    /// Evicts `url` as a provider does: the placeholder first, then the file goes.
    private func evict(_ url: URL) throws {
        let info = try FileManager.default.attributesOfItem(atPath: url.path)
        let size = (info[.size] as? NSNumber)?.int64Value ?? 0
        let modified = info[.modificationDate] as? Date ?? Date()
        try ItemPlaceholder(name: url.lastPathComponent, size: size, modificationDate: modified).write(besideItemAt: url)
        try FileManager.default.removeItem(at: url)
    }

    @Test("gathering lists an evicted item under its real name with its size, not downloaded; a hidden placeholder alone is not a result")
    func gathering() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let documents = try cloud.documents()
        let big = documents.appending(path: "big report.txt")
        try Data(count: 100_000).write(to: big)
        try evict(big)
        try Data("kept".utf8).write(to: documents.appending(path: "kept.txt"))
        // A placeholder whose file is also there (an eviction cut short): the file is the item.
        let both = documents.appending(path: "both.txt")
        try Data("12345".utf8).write(to: both)
        try ItemPlaceholder(name: "both.txt", size: 99, modificationDate: Date()).write(besideItemAt: both)
        // A broken placeholder is no result.
        try Data("garbage".utf8).write(to: documents.appending(path: ".broken.txt.clouddocs-placeholder"))

        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.ubiquitousDocuments], account: cloud.account)
        defer { query.stop() }
        #expect(Set(query.results.map(\.name)) == ["big report.txt", "kept.txt", "both.txt"])
        let evicted = try #require(query.results.first { $0.name == "big report.txt" })
        #expect(evicted.isEvicted && evicted.size == 100_000)
        #expect(evicted.value(of: .downloadingStatus) as? String == UbiquitousItemStatus.DownloadingStatus.notDownloaded.rawValue)
        #expect(evicted.value(of: .percentDownloaded) as? Double == 0)
        let present = try #require(query.results.first { $0.name == "both.txt" })
        #expect(!present.isEvicted && present.size == 5)
        #expect(MetadataItem.examine(big, account: cloud.account)?.isEvicted == true)
    }

    @Test("evicting and downloading are changes of the same result (same identifier), never a removal")
    func liveEvictionAndDownload() throws {
        let cloud = try ScratchCloud()
        defer { cloud.remove() }
        let file = try cloud.documents().appending(path: "notes.txt")
        try Data("some notes".utf8).write(to: file)
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.ubiquitousDocuments], account: cloud.account)
        defer { query.stop() }
        let original = try #require(query.results.first)

        try evict(file)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.id == original.id && $0.isEvicted && $0.size == 10 } })
        // The download: the file is put in place, then the placeholder goes.
        try Data("newer notes!".utf8).write(to: file)
        try ItemPlaceholder.remove(forItemAt: file)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.id == original.id && !$0.isEvicted && $0.size == 12 } })
        #expect(recorder.merged.removed.isEmpty && recorder.merged.added.isEmpty)
        #expect(query.results.count == 1 && query.results.first?.isEvicted == false)
    }
}

@Suite("The agent provider: evicted items")
struct AgentProviderEvictedTests {
    @Test("an evicted item is ubiquitous and not downloaded; with its file back it is current again")
    func status() throws {
        let cloud = try ScratchCloud(provider: .agent)
        defer { cloud.remove() }
        let file = try cloud.documents().appending(path: "a.txt")
        try Data("abc".utf8).write(to: file)
        try ItemPlaceholder(name: "a.txt", size: 3, modificationDate: Date()).write(besideItemAt: file)
        try FileManager.default.removeItem(at: file)
        #expect(cloud.account.isUbiquitousItem(at: file))
        // No agent runs here: the provider still knows the item is only a placeholder.
        #expect(!SyncAgentProvider.isEvicted(cloud.root) && SyncAgentProvider.isEvicted(file))
        let evicted = cloud.account.status(ofItemAt: file)
        #expect(evicted.downloadingStatus == .notDownloaded && evicted.isUploaded && evicted.percentDownloaded == 0)
        try Data("abc".utf8).write(to: file)
        #expect(!SyncAgentProvider.isEvicted(file))
        #expect(cloud.account.status(ofItemAt: file).downloadingStatus == .current)
    }
}

extension AgentProviderEvictedTests {
    @Test("without a running agent: evicting is refused and says why, the file stays; downloading a present file does nothing")
    func noAgent() throws {
        let cloud = try ScratchCloud(provider: .agent)
        defer { cloud.remove() }
        let file = try cloud.documents().appending(path: "a.txt")
        try Data("abc".utf8).write(to: file)
        do throws(UbiquityError) {
            try cloud.account.evictUbiquitousItem(at: file)
            Issue.record("evicted without an agent")
        } catch {
            guard case .evictionRefused(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("not running"))
        }
        #expect(FileManager.default.fileExists(atPath: file.path))
        try cloud.account.startDownloadingUbiquitousItem(at: file)
        let missing = try cloud.documents().appending(path: "missing.txt")
        #expect(throws: UbiquityError.itemNotFound(path: missing.path)) { try cloud.account.startDownloadingUbiquitousItem(at: missing) }
    }
}
