import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

/// The version store finds the item recorded at a path through its path index, not by reading
/// every `item.json` (Docs/Versions.md, "Which item a version belongs to").
@Suite("Version store: the path index")
struct VersionStorePathIndexTests {
    /// Writes an item record the way a store made before the index did: no line in `paths/`.
    private static func writeRecordWithoutIndex(_ store: VersionStore, id: String, path: String) throws {
        try FileManager.default.createDirectory(atPath: store.itemFolder(id), withIntermediateDirectories: true)
        try JSONEncoder().encode(ItemRecord(id: id, path: path)).write(to: URL(fileURLWithPath: store.itemRecordPath(id)))
    }

    @Test("a store made before the index is read whole once, then answered from the index")
    func olderStoreIsIndexedOnce() throws {
        try Scratch.with { folder in
            let store = VersionStore(root: folder.appendingPathComponent("store").path)
            let ids = (0..<20).map { _ in UUID().uuidString }
            for (index, id) in ids.enumerated() { try Self.writeRecordWithoutIndex(store, id: id, path: "/documents/\(index).txt") }
            #expect(store.indexedItems(at: "/documents/3.txt") == nil, "not trusted before it is complete")
            #expect(store.itemID(recordedAt: "/documents/3.txt") == ids[3])
            #expect(FileManager.default.fileExists(atPath: store.pathIndexCompleteMarker))
            #expect(store.indexedItems(at: "/documents/7.txt") == [ids[7]])
            // Answered from the index: a record the index does not list is not found by its path.
            let unlisted = UUID().uuidString
            try Self.writeRecordWithoutIndex(store, id: unlisted, path: "/documents/unlisted.txt")
            #expect(store.itemID(recordedAt: "/documents/unlisted.txt") == nil)
            #expect(store.itemID(recordedAt: "/documents/7.txt") == ids[7])
            #expect(store.itemID(recordedAt: "/documents/none.txt") == nil)
        }
    }

    @Test("an item that moved is found at its new path only; a line cut by a crash is skipped")
    func movedItemsAndCutLines() throws {
        try Scratch.with { folder in
            let store = VersionStore(root: folder.appendingPathComponent("store").path)
            #expect(store.itemID(recordedAt: "/a.txt") == nil)  // an empty store: complete at once
            let id = UUID().uuidString
            try store.makeFolders(store.itemFolder(id))
            try store.writeItemRecord(ItemRecord(id: id, path: "/a.txt"))
            #expect(store.itemID(recordedAt: "/a.txt") == id)
            try store.writeItemRecord(ItemRecord(id: id, path: "/b.txt"))
            #expect(store.itemID(recordedAt: "/a.txt") == nil, "the line under the old path is stale")
            #expect(store.itemID(recordedAt: "/b.txt") == id)
            // A line cut short by a crash, then a whole one after it.
            let other = UUID().uuidString
            _ = FileManager.default.createFile(atPath: store.pathIndexFile("/c.txt"), contents: Data(UUID().uuidString.prefix(10).utf8))
            try store.makeFolders(store.itemFolder(other))
            try store.writeItemRecord(ItemRecord(id: other, path: "/c.txt"))
            #expect(store.itemID(recordedAt: "/b.txt") == id)
            #expect(store.itemID(recordedAt: "/c.txt") == other)
        }
    }

    @Test("versions of a replaced file are still found by its path, through the index")
    func replacedFileKeepsItsVersions() throws {
        try withVersionStore { folder, store in
            let item = folder.appendingPathComponent("doc.txt")
            try put("one", at: item)
            try addVersion("first", of: item)
            // Replaced by a new file without the identity attribute (an editor's save).
            try FileManager.default.removeItem(at: item)
            try put("two", at: item)
            #expect(try versionTexts(of: item) == ["first"])
            #expect(FileManager.default.fileExists(atPath: store.pathIndexCompleteMarker))
        }
    }
}
