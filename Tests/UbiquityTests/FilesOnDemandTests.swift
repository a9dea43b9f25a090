import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import Ubiquity

/// The reader's side of files on demand, without an agent: which item a missing path stands for,
/// and what an access does when no agent runs.
@Suite("Files on demand: the resolver in an app's process")
struct FilesOnDemandTests {
    @Test("a missing path inside an evicted package stands for the package; a missing path with no placeholder on the way for nothing")
    func evictedItemOnTheWay() throws {
        let cloud = try ScratchCloud(provider: .agent)
        defer { cloud.remove() }
        let documents = try cloud.documents()
        let container = documents.deletingLastPathComponent().path
        let package = documents.appending(path: "Trip.album", directoryHint: .isDirectory)
        var placeholder = ItemPlaceholder(name: "Trip.album", size: 10, modificationDate: Date())
        placeholder.isPackage = true
        try placeholder.write(besideItemAt: package)
        try Data("x".utf8).write(to: documents.appending(path: "here.txt"))

        #expect(AgentDownloadResolver.evictedItem(containing: "Documents/Trip.album/index.json", in: container) == "Documents/Trip.album")
        #expect(AgentDownloadResolver.evictedItem(containing: "Documents/Trip.album", in: container) == "Documents/Trip.album")
        #expect(AgentDownloadResolver.evictedItem(containing: "Documents/new.txt", in: container) == nil)
        #expect(AgentDownloadResolver.evictedItem(containing: "Documents/here.txt/x", in: container) == nil)
        #expect(AgentDownloadResolver.evictedItem(containing: "Documents/missing/inner.txt", in: container) == nil)
    }

    @Test("with no agent running, a coordinated read of an evicted item fails with itemNotDownloaded at once; a new file is simply created")
    func noAgent() throws {
        let cloud = try ScratchCloud(provider: .agent)
        defer { cloud.remove() }
        let documents = try cloud.documents()  // enables files on demand for this root
        let file = documents.appending(path: "gone.txt")
        try ItemPlaceholder(name: "gone.txt", size: 3, modificationDate: Date()).write(besideItemAt: file)
        do {
            _ = try Coordinator().coordinate(readingItemAt: file) { _ in Issue.record("the accessor ran") }
            Issue.record("the read did not fail")
        } catch let error as CoordinationError {
            guard case .itemNotDownloaded(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("not running"))
        }
        let new = documents.appending(path: "new.txt")
        try Coordinator().coordinate(writingItemAt: new) { try Data("new".utf8).write(to: $0) }
        #expect(try String(contentsOf: new, encoding: .utf8) == "new")
    }
}
