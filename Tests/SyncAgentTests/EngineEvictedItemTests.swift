import Foundation
import Testing
import TestSupport
import Ubiquity
@testable import SyncAgent

/// Files on demand, the agent's half so far: an evicted item (only its placeholder here) is never
/// read as a deletion, never downloaded again by a pass, and its placeholder never uploaded.
@Suite("The engine and evicted items")
struct EngineEvictedItemTests {
    @Test("an evicted file stays on the server and evicted here; its placeholder is not uploaded; the file coming back syncs again")
    func evictedIsNotDeleted() async throws {
        let devices = try TwoDevices()
        try devices.write("only in the cloud", "Documents/big.txt", on: devices.a)
        try devices.write("x", "top.txt", on: devices.a)
        await devices.sync(devices.a)
        let file = devices.url(devices.a, "Documents/big.txt")
        try ItemPlaceholder(name: "big.txt", size: 17, modificationDate: Date()).write(besideItemAt: file)
        try FileManager.default.removeItem(at: file)
        let top = devices.url(devices.a, "top.txt")
        try ItemPlaceholder(name: "top.txt", size: 1, modificationDate: Date()).write(besideItemAt: top)
        try FileManager.default.removeItem(at: top)

        let pass = await devices.sync(devices.a)
        #expect(pass.plan.refusal == nil && pass.plan.steps.isEmpty, "\(pass.plan.steps)")
        #expect(devices.store.data(at: "Documents/big.txt").map { String(decoding: $0, as: UTF8.self) } == "only in the cloud")
        #expect(!devices.store.paths.contains { $0.contains("clouddocs-placeholder") })
        // Changed on another device meanwhile: still not downloaded by a pass (it stays evicted).
        await devices.sync(devices.b)
        try devices.write("newer", "Documents/big.txt", on: devices.b)
        await devices.sync(devices.b)
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        // Back (downloaded by hand, placeholder removed): synced as any file.
        try ItemPlaceholder.remove(forItemAt: file)
        try devices.write("mine", "Documents/big.txt", on: devices.a)
        let back = await devices.sync(devices.a)
        #expect(!back.plan.steps.isEmpty)
    }

    @Test("eviction is refused for an item never synced, one changed since, or one in conflict; granted once uploaded; a download request brings it back")
    func refusals() async throws {
        let devices = try TwoDevices()
        try devices.write("synced", "a.txt", on: devices.a)
        try devices.write("folder file", "Folder/f.txt", on: devices.a)
        await devices.sync(devices.a)
        try devices.write("new", "new.txt", on: devices.a)
        #expect(await devices.a.evict("new.txt")?.contains("not synced") == true)
        try devices.write("changed", "a.txt", on: devices.a)
        #expect(await devices.a.evict("a.txt")?.contains("not uploaded") == true)
        await devices.sync(devices.a)
        // Both sides change: a conflict version here; then eviction is refused until resolved.
        await devices.sync(devices.b)
        try devices.write("from B", "a.txt", on: devices.b)
        await devices.sync(devices.b)
        try devices.write("from A", "a.txt", on: devices.a)
        await devices.sync(devices.a)
        #expect(await devices.a.evict("a.txt")?.contains("conflict") == true)
        #expect(FileManager.default.fileExists(atPath: devices.url(devices.a, "a.txt").path))
        // An uploaded file without conflicts is evicted (here through its folder), and comes back when asked.
        #expect(await devices.a.evict("Folder") == nil)
        #expect(!FileManager.default.fileExists(atPath: devices.url(devices.a, "Folder/f.txt").path))
        #expect(await devices.a.requestDownload("Folder/f.txt") == nil)
        await devices.sync(devices.a)
        #expect(devices.read("Folder/f.txt", on: devices.a) == "folder file")
        #expect(try ItemPlaceholder.read(forItemAt: devices.url(devices.a, "Folder/f.txt")) == nil)
        #expect(await devices.a.requestDownload("Folder/f.txt") == nil)   // already here: nothing to do
    }
    @Test("a file written under an evicted item's name by a program that did not download it: a conflict, never an upload over the server's copy")
    func writtenOverEvicted() async throws {
        let devices = try TwoDevices()
        try devices.write("the server's copy", "Documents/notes.txt", on: devices.a)
        await devices.sync(devices.a)
        let file = devices.url(devices.a, "Documents/notes.txt")
        try ItemPlaceholder(name: "notes.txt", size: 17, modificationDate: Date()).write(besideItemAt: file)
        try FileManager.default.removeItem(at: file)
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
        // A program unaware of files on demand writes a new file under the real name.
        try devices.write("written blind", "Documents/notes.txt", on: devices.a)
        let pass = await devices.sync(devices.a)
        #expect(pass.plan.steps == [.conflict("Documents/notes.txt")])
        #expect(devices.store.data(at: "Documents/notes.txt").map { String(decoding: $0, as: UTF8.self) } == "the server's copy")
        #expect(devices.read("Documents/notes.txt", on: devices.a) == "the server's copy")
        #expect(try devices.conflictTexts("Documents/notes.txt", on: devices.a) == ["written blind"])
        #expect(try ItemPlaceholder.read(forItemAt: file) == nil, "the placeholder goes once the item is here")
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
    }
}
