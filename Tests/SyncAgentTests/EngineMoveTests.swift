import Foundation
import Testing
import TestSupport
@testable import SyncAgent

@Suite("Sync engine: moves", .serialized)
struct EngineMoveTests {
    @Test("a rename on A is a MOVE on the server (no upload); with file ids B moves its copy (no download)")
    func renameTravels() async throws {
        let devices = try TwoDevices(store: InMemoryRemoteStore(givesFileIDs: true))
        try devices.write("contents", "a.txt", on: devices.a)
        try devices.write("x", "keep.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try FileManager.default.createDirectory(at: devices.url(devices.a, "Moved"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: devices.url(devices.a, "a.txt"), to: devices.url(devices.a, "Moved/b.txt"))
        let uploads = devices.store.uploadCount, downloads = devices.store.downloadCount
        let onA = await devices.sync(devices.a)
        #expect(onA.plan.steps == [.makeRemoteFolder("Moved"), .moveRemote(from: "a.txt", to: "Moved/b.txt")])
        #expect(devices.store.uploadCount == uploads)
        #expect(devices.store.data(at: "Moved/b.txt") == Data("contents".utf8))
        #expect(devices.store.data(at: "a.txt") == nil)
        let onB = await devices.sync(devices.b)
        #expect(onB.plan.steps == [.makeLocalFolder("Moved"), .moveLocal(from: "a.txt", to: "Moved/b.txt")])
        #expect(devices.store.downloadCount == downloads)
        #expect(devices.read("Moved/b.txt", on: devices.b) == "contents")
        #expect(devices.read("a.txt", on: devices.b) == nil)
        #expect(await devices.a.syncOnce().plan.steps.isEmpty)
        #expect(await devices.b.syncOnce().plan.steps.isEmpty)
    }

    @Test("a folder renamed on A: its files move, the old folder goes, nothing is uploaded again")
    func folderRename() async throws {
        let devices = try TwoDevices()
        for index in 0..<3 { try devices.write("\(index)", "Old/f\(index).txt", on: devices.a) }
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try FileManager.default.moveItem(at: devices.url(devices.a, "Old"), to: devices.url(devices.a, "New"))
        let uploads = devices.store.uploadCount
        await devices.sync(devices.a)
        #expect(devices.store.uploadCount == uploads)
        #expect(devices.store.paths == ["New", "New/f0.txt", "New/f1.txt", "New/f2.txt"])
        await devices.sync(devices.b)
        #expect((0..<3).allSatisfy { devices.read("New/f\($0).txt", on: devices.b) == "\($0)" })
        #expect(!FileManager.default.fileExists(atPath: devices.url(devices.b, "Old").path))
    }
}
