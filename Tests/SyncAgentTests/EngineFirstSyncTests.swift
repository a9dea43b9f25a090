import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// A new device as a user sets one up: the root exists, the container folder does not yet.
@Suite("A new device: the container folder is made on the first sync")
struct EngineFirstSyncTests {
    @Test("a device that never synced makes its container folder and downloads; one that synced and lost it is refused")
    func newDevice() async throws {
        let devices = try TwoDevices()
        try devices.write("hello", "Documents/a.txt", on: devices.a)
        await devices.sync(devices.a)
        // A third device whose root has no container folder yet.
        let root = devices.scratch.url.appending(path: "C")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let configuration = TwoDevices.configuration(root, SyncGuards(), .seconds(3600))
        let c = try SyncEngine(configuration: configuration, store: devices.store)
        let report = await c.syncOnce()
        #expect(report.plan.refusal == nil)
        let text = try? String(contentsOf: configuration.containerURL.appending(path: "Documents/a.txt"), encoding: .utf8)
        #expect(text == "hello")

        // Synced before, then missing (an unmounted disk): refused, even by a restarted engine.
        try FileManager.default.removeItem(at: configuration.containerURL)
        let restarted = try SyncEngine(configuration: configuration, store: devices.store)
        #expect(!FileManager.default.fileExists(atPath: configuration.containerURL.path))
        #expect(await restarted.syncOnce().plan.refusal != nil)
        #expect(devices.store.paths.count >= 2)
    }
}
