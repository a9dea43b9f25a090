import Foundation
import Testing
import TestSupport
@testable import SyncAgent

@Suite("Sync engine: two devices, one server", .serialized)
struct EngineTwoDeviceTests {
    @Test("an edit on A appears on B, and a second edit replaces it")
    func editAppears() async throws {
        let devices = try TwoDevices()
        try devices.write("first", "Notes/a.txt", on: devices.a)
        await devices.sync(devices.a)
        #expect(devices.store.data(at: "Notes/a.txt") == Data("first".utf8))
        await devices.sync(devices.b)
        #expect(devices.read("Notes/a.txt", on: devices.b) == "first")
        try devices.write("second", "Notes/a.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        #expect(devices.read("Notes/a.txt", on: devices.b) == "second")
        // Nothing changed: a pass transfers nothing.
        let uploads = devices.store.uploadCount, downloads = devices.store.downloadCount
        let idle = await devices.sync(devices.a)
        await devices.sync(devices.b)
        #expect(idle.plan.steps.isEmpty)
        #expect(devices.store.uploadCount == uploads && devices.store.downloadCount == downloads)
        #expect(try devices.conflictTexts("Notes/a.txt", on: devices.b).isEmpty)
    }

    @Test("a deletion on A is carried to B; internal names and links are never uploaded")
    func deletionAndExclusions() async throws {
        let devices = try TwoDevices()
        try devices.write("x", "a.txt", on: devices.a)
        try devices.write("lock", ".~lock.a.txt#", on: devices.a)
        try devices.write("swap", ".a.txt.swp", on: devices.a)
        try FileManager.default.createSymbolicLink(atPath: devices.url(devices.a, "outside").path, withDestinationPath: "/etc")
        await devices.sync(devices.a)
        #expect(devices.store.paths == ["a.txt"])
        await devices.sync(devices.b)
        try FileManager.default.removeItem(at: devices.url(devices.a, "a.txt"))
        try devices.write("keep", "b.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        #expect(devices.read("a.txt", on: devices.b) == nil)
        #expect(devices.read("b.txt", on: devices.b) == "keep")
    }

    @Test("simultaneous edits: the server's version is current on both, the other a conflict version on both; resolving on one resolves on all")
    func simultaneousEdits() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "n.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try devices.write("from A", "n.txt", on: devices.a)
        try devices.write("from B, longer", "n.txt", on: devices.b)
        await devices.sync(devices.a)
        let report = await devices.sync(devices.b)
        #expect(report.plan.steps == [.conflict("n.txt")])
        #expect(devices.read("n.txt", on: devices.b) == "from A")
        #expect(try devices.conflictTexts("n.txt", on: devices.b) == ["from B, longer"])
        #expect(await devices.b.status.conflicted == ["n.txt"])
        await devices.sync(devices.a)
        #expect(devices.read("n.txt", on: devices.a) == "from A")
        #expect(try devices.conflictTexts("n.txt", on: devices.a) == ["from B, longer"])

        // Resolved on A: the conflict area's file goes, and B resolves its copy.
        for version in try FileVersion.unresolvedConflictVersionsOfItem(at: devices.url(devices.a, "n.txt")) {
            try version.resolve()
        }
        await devices.sync(devices.a)
        #expect(!devices.store.paths.contains { $0.hasPrefix(".clouddocs-conflicts/") && $0.split(separator: "/").count > 2 })
        await devices.sync(devices.b)
        #expect(try devices.conflictTexts("n.txt", on: devices.b).isEmpty)
        #expect(await devices.b.status.conflicted.isEmpty)
    }

    @Test("identical edits on both devices are not a conflict")
    func identicalEdits() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "n.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try devices.write("same edit", "n.txt", on: devices.a)
        try devices.write("same edit", "n.txt", on: devices.b)
        try devices.write("new on both", "new.txt", on: devices.a)
        try devices.write("new on both", "new.txt", on: devices.b)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        await devices.sync(devices.a)
        #expect(try devices.conflictTexts("n.txt", on: devices.b).isEmpty)
        #expect(try devices.conflictTexts("new.txt", on: devices.b).isEmpty)
        #expect(devices.read("n.txt", on: devices.b) == "same edit")
        let again = await devices.sync(devices.b)
        #expect(again.plan.steps.isEmpty)
    }

    @Test("a mass deletion is held on the device that made it, then on the others, each until approved")
    func heldMassDeletion() async throws {
        let devices = try TwoDevices()
        for index in 0..<10 { try devices.write("\(index)", "f\(index).txt", on: devices.a) }
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        for index in 0..<8 { try FileManager.default.removeItem(at: devices.url(devices.a, "f\(index).txt")) }
        // Held here first: nothing reaches the server until A's user approves.
        await devices.sync(devices.a)
        #expect(devices.store.paths.count == 10)
        #expect(await devices.a.status.heldDeletions.map(\.fromServer) == [false])
        await devices.a.approveHeldDeletions()
        await devices.sync(devices.a)
        #expect(devices.store.paths.count == 2)
        let held = await devices.sync(devices.b)
        #expect(held.plan.heldDeletions.count == 8)
        #expect((0..<10).allSatisfy { devices.read("f\($0).txt", on: devices.b) != nil })
        #expect(await devices.b.status.heldDeletions.map { HeldDeletion(fromServer: $0.fromServer, count: $0.count, examples: $0.examples) }
                == [HeldDeletion(fromServer: true, count: 8,
                                                                         examples: ["f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"])])
        // Held, not re-uploaded: the server keeps its two files.
        #expect(devices.store.paths.count == 2)
        await devices.b.approveHeldDeletions()
        await devices.sync(devices.b)
        #expect((0..<8).allSatisfy { devices.read("f\($0).txt", on: devices.b) == nil })
        #expect(devices.read("f9.txt", on: devices.b) == "9")
        #expect(await devices.b.status.heldDeletions.isEmpty)
    }

    @Test("a missing or emptied local root is refused, and nothing is deleted on the server")
    func missingRoot() async throws {
        let devices = try TwoDevices()
        for index in 0..<3 { try devices.write("\(index)", "f\(index).txt", on: devices.a) }
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        let container = devices.container(devices.b)
        let aside = container.deletingLastPathComponent().appending(path: "unmounted")
        try FileManager.default.moveItem(at: container, to: aside)
        let missing = await devices.b.syncOnce()
        #expect(missing.plan.refusal != nil)
        guard case .refused = await devices.b.status.state else { Issue.record("not refused"); return }
        // An empty mount point instead of the folder.
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        let emptied = await devices.b.syncOnce()
        #expect(emptied.plan.refusal != nil)
        #expect(devices.store.paths.count == 3)
        // Mounted again: syncing resumes with nothing to do.
        try FileManager.default.removeItem(at: container)
        try FileManager.default.moveItem(at: aside, to: container)
        let back = await devices.sync(devices.b)
        #expect(back.plan.refusal == nil && back.plan.steps.isEmpty)
        #expect(await devices.b.status.state == .idle)
    }

    @Test("a server rolled back to an older copy is a new server: nothing deleted, newer local files kept as conflict versions")
    func rolledBackServer() async throws {
        let devices = try TwoDevices()
        for index in 0..<10 { try devices.write("old \(index)", "f\(index).txt", on: devices.a) }
        await devices.sync(devices.a)
        let backup = devices.store.contents
        for index in 0..<10 { try devices.write("new \(index)", "f\(index).txt", on: devices.a) }
        try devices.write("after the backup", "late.txt", on: devices.a)
        await devices.sync(devices.a)
        devices.store.restore(backup)
        let report = await devices.sync(devices.a)
        #expect(report.plan.serverReplaced)
        #expect(!report.plan.steps.contains { if case .deleteLocal = $0 { true } else if case .deleteRemote = $0 { true } else { false } })
        #expect(devices.read("late.txt", on: devices.a) == "after the backup")
        #expect(devices.store.data(at: "late.txt") == Data("after the backup".utf8))
        for index in 0..<10 {
            #expect(devices.read("f\(index).txt", on: devices.a) == "old \(index)")
            #expect(try devices.conflictTexts("f\(index).txt", on: devices.a) == ["new \(index)"])
        }
    }

    @Test("offline: the pass stops, the change stays queued, and goes when the server is back")
    func offline() async throws {
        let devices = try TwoDevices()
        try devices.write("x", "a.txt", on: devices.a)
        devices.store.setFailure(.unavailable(status: 503, retryAfter: nil))
        let report = await devices.a.syncOnce()
        #expect(report.wentOffline)
        guard case .offline = await devices.a.status.state else { Issue.record("not offline"); return }
        devices.store.setFailure(nil)
        await devices.sync(devices.a)
        #expect(devices.store.data(at: "a.txt") == Data("x".utf8))
    }

    @Test("a server change between listing and upload is never overwritten (412 → planned again)")
    func preconditionFailure() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "a.txt", on: devices.a)
        await devices.sync(devices.a)
        try devices.write("local edit", "a.txt", on: devices.a)
        // The server changes after the listing: simulate by a direct write and an upload with the old tag.
        devices.store.put("someone else", at: "a.txt")
        let report = await devices.a.syncOnce()
        // The listing already saw the change: a conflict, the server's bytes current.
        #expect(report.plan.steps == [.conflict("a.txt")])
        #expect(devices.read("a.txt", on: devices.a) == "someone else")
        #expect(try devices.conflictTexts("a.txt", on: devices.a) == ["local edit"])
    }

    @Test("an edit against a deletion: the edit wins on both devices")
    func editBeatsDelete() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "a.txt", on: devices.a)
        try devices.write("base", "b.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        // a.txt: deleted on A, edited on B. b.txt: edited on A, deleted on B.
        try FileManager.default.removeItem(at: devices.url(devices.a, "a.txt"))
        try devices.write("A's edit", "b.txt", on: devices.a)
        try devices.write("B's edit", "a.txt", on: devices.b)
        try FileManager.default.removeItem(at: devices.url(devices.b, "b.txt"))
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        await devices.sync(devices.a)
        for engine in [devices.a, devices.b] {
            #expect(devices.read("a.txt", on: engine) == "B's edit")
            #expect(devices.read("b.txt", on: engine) == "A's edit")
        }
        #expect(devices.store.data(at: "a.txt") == Data("B's edit".utf8))
        #expect(devices.store.data(at: "b.txt") == Data("A's edit".utf8))
    }
}
