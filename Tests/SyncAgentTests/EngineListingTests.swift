import Foundation
import Testing
import TestSupport
@testable import SyncAgent

@Suite("Sync engine: listing and links", .serialized)
struct EngineListingTests {
    @Test("a server whose folder tags propagate is listed again only when the root's tag changed")
    func rootTagShortcut() async throws {
        let devices = try TwoDevices(store: InMemoryRemoteStore(propagatesFolderTags: true))
        try devices.write("x", "Notes/deep/a.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.a)  // lists again: its own writes changed the root's tag
        let lists = devices.store.listCount
        let idle = await devices.sync(devices.a)
        #expect(idle.plan.steps.isEmpty)
        #expect(devices.store.listCount == lists, "an unchanged root is not listed again")
        devices.store.put("y", at: "Notes/deep/a.txt")
        await devices.sync(devices.a)
        #expect(devices.store.listCount > lists)
        #expect(devices.read("Notes/deep/a.txt", on: devices.a) == "y")
    }

    @Test("a folder that is a symbolic link here is never followed: nothing is written outside the container")
    func linkedFolderNotFollowed() async throws {
        let devices = try TwoDevices()
        let outside = devices.scratch.url.appending(path: "outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: devices.url(devices.b, "Linked"), withDestinationURL: outside)
        devices.store.put("payload", at: "Linked/evil.txt")
        let report = await devices.b.syncOnce()
        #expect(!report.failed.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: outside.appending(path: "evil.txt").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        // Reported in the status, and nothing was uploaded from the link either.
        #expect(await devices.b.status.lastErrors.contains { $0.path == "Linked" })
        #expect(devices.store.paths == ["Linked", "Linked/evil.txt"])
    }
}
