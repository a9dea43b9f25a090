import Foundation
import Glibc
import Testing
import TestSupport
@testable import SyncAgent

/// The review findings on the engine, each shown fixed: a tag read after a PUT is verified, a
/// folder is deleted on the server only as the listing the agent checked, a rollback that only
/// removed recent additions is held, an approval applies to the set shown, a conflict version is
/// recorded once across a crash, and a local folder deletion never follows a symbolic link.
@Suite("Sync engine: review findings")
struct EngineReviewFindingsTests {
    @Test("#3 a tag read after a PUT without one is verified: a third party's same-size write in between becomes current, ours a conflict version")
    func unverifiedTagAfterUpload() async throws {
        let devices = try TwoDevices()
        devices.store.setTagsInPutAnswers(false)
        try devices.write("mine-1", "x.txt", on: devices.a)
        devices.store.afterNextUpload { state in InMemoryRemoteStore.put("them-1", at: "x.txt", in: &state) }
        await devices.sync(devices.a)
        let check = await devices.sync(devices.a)
        #expect(check.plan.steps == [.conflict("x.txt")])
        #expect(devices.read("x.txt", on: devices.a) == "them-1")
        #expect(try devices.conflictTexts("x.txt", on: devices.a) == ["mine-1"])
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
    }

    @Test("#3 a tag read after a PUT is trusted after one comparison when nobody wrote in between")
    func verifiedTagAfterUpload() async throws {
        let devices = try TwoDevices()
        devices.store.setTagsInPutAnswers(false)
        try devices.write("mine", "x.txt", on: devices.a)
        await devices.sync(devices.a)
        let check = await devices.sync(devices.a)
        #expect(check.plan.steps == [.conflict("x.txt")])
        #expect(try devices.conflictTexts("x.txt", on: devices.a).isEmpty)
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
    }

    @Test("#3 a write of another size between the PUT and the listing: theirs current, ours kept as a conflict version")
    func otherSizeAfterUpload() async throws {
        let devices = try TwoDevices()
        devices.store.setTagsInPutAnswers(false)
        try devices.write("mine", "x.txt", on: devices.a)
        devices.store.afterNextUpload { state in InMemoryRemoteStore.put("theirs, longer", at: "x.txt", in: &state) }
        await devices.sync(devices.a)
        let next = await devices.sync(devices.a)
        #expect(next.plan.steps == [.conflict("x.txt")])
        #expect(devices.read("x.txt", on: devices.a) == "theirs, longer")
        #expect(try devices.conflictTexts("x.txt", on: devices.a) == ["mine"])
    }

    @Test("#3 the SHA-1 of the uploaded bytes is Apache's digest tag")
    func digestOfBytes() throws {
        let scratch = try Scratch("engine-digest")
        defer { scratch.remove() }
        let file = scratch.url.appending(path: "h.txt")
        try Data("hello".utf8).write(to: file)
        let tag = RemoteTag(strong: "\"qvTGHdzF6KLavt4PO0gs2a6pQ00=\"")
        #expect(ContentDigest.looksLikeSHA1(tag))
        #expect(ContentDigest.tag(tag, isSHA1Of: file.path))
        #expect(!ContentDigest.tag(RemoteTag(strong: "\"XUFAKrxLKna5cZ2REBfFkg==\""), isSHA1Of: file.path))
        let big = scratch.url.appending(path: "big")
        try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: big)
        // Several 64 KiB reads and a partial last block (Python's hashlib gave the value).
        #expect(ContentDigest.sha1(ofFileAt: big.path).map { Data($0).base64EncodedString() } == "mPcvuutF7DsceuAn/XLdof1X7Kg=")
    }

    @Test("#4 a folder deleted here while another client adds a file in it on the server: the file and the folder stay")
    func folderDeletionKeepsNewServerFile() async throws {
        let devices = try TwoDevices()
        try devices.write("x", "F/x.txt", on: devices.a)
        try devices.write("k", "keep.txt", on: devices.a)  // (an emptied container is refused)
        await devices.sync(devices.a)
        try FileManager.default.removeItem(at: devices.url(devices.a, "F"))
        // Between the agent's listing and its deletion of the folder, another client writes in it.
        devices.store.beforeNextMove { state in InMemoryRemoteStore.put("new", at: "F/y.txt", in: &state) }
        _ = await devices.a.syncOnce()
        #expect(devices.store.data(at: "F/y.txt") == Data("new".utf8))
        #expect(!devices.store.paths.contains { $0.hasPrefix(".clouddocsd") })
        await devices.sync(devices.a)
        #expect(devices.read("F/y.txt", on: devices.a) == "new")
    }

    @Test("#4 an empty folder deleted here is deleted on the server")
    func folderDeletion() async throws {
        let devices = try TwoDevices()
        try devices.write("x", "F/x.txt", on: devices.a)
        try devices.write("k", "keep.txt", on: devices.a)  // (an emptied container is refused)
        await devices.sync(devices.a)
        try FileManager.default.removeItem(at: devices.url(devices.a, "F"))
        let pass = await devices.sync(devices.a)
        #expect(pass.plan.steps == [.deleteRemote("F/x.txt"), .deleteRemote("F")])
        #expect(devices.store.paths == ["keep.txt"])
    }

    @Test("#5 the server lacks only files this device added lately (a rollback): their deletion here is held")
    func recentAdditionsMissing() {
        let now: Int64 = 1_000_000
        var base: [String: JournalEntry] = [:]
        var local: [String: LocalItem] = [:]
        var remote: [String: RemoteItem] = [:]
        for index in 0..<20 {
            let path = "old\(index)"
            base[path] = PlannerTests.base(path)
            local[path] = PlannerTests.local(path)
            remote[path] = PlannerTests.remote(path)
        }
        for index in 0..<3 {
            var entry = PlannerTests.base("new\(index)")
            entry.addedAt = now - 60
            base[entry.path] = entry
            local[entry.path] = PlannerTests.local(entry.path)
        }
        var input = SyncPlanInput(base: base, local: local, remote: remote)
        input.now = now
        let plan = SyncPlanner().plan(input)
        #expect(plan.heldDeletions == ["new0", "new1", "new2"])
        #expect(plan.steps.isEmpty)
        // Approved as a whole: they go.
        input.approvedDeletions = ["new0", "new1", "new2"]
        #expect(SyncPlanner().plan(input).steps.count == 3)
        // One recent file deleted by another device is ordinary work.
        remote["new1"] = PlannerTests.remote("new1")
        remote["new2"] = PlannerTests.remote("new2")
        var single = SyncPlanInput(base: base, local: local, remote: remote)
        single.now = now
        #expect(SyncPlanner().plan(single).steps == [.deleteLocal("new0")])
    }

    @Test("#9 an approval applies to the set of held deletions that was shown, not to a later one")
    func approvalBoundToShownSet() async throws {
        let devices = try TwoDevices()
        for index in 0..<10 { try devices.write("\(index)", "f\(index).txt", on: devices.a) }
        await devices.sync(devices.a)
        for index in 0..<8 { try FileManager.default.removeItem(at: devices.url(devices.a, "f\(index).txt")) }
        await devices.sync(devices.a)
        let shown = try #require(await devices.a.status.heldDeletions.first?.setID)
        // One more deletion: the held set is not the one shown any more.
        try FileManager.default.removeItem(at: devices.url(devices.a, "f8.txt"))
        await devices.sync(devices.a)
        await devices.a.approveHeldDeletions(setIDs: [shown])
        await devices.sync(devices.a)
        #expect(devices.store.paths.count == 10)
        let current = try #require(await devices.a.status.heldDeletions.first?.setID)
        #expect(current != shown)
        await devices.a.approveHeldDeletions(setIDs: [current])
        await devices.sync(devices.a)
        #expect(devices.store.paths == ["f9.txt"])
    }

    @Test("#10 a conflict journalled without its local version (kill -9 between the two) is completed without a second version")
    func conflictRecordedOnce() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "n.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try devices.write("edit A", "n.txt", on: devices.a)
        try devices.write("edit B", "n.txt", on: devices.b)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        #expect(try devices.conflictTexts("n.txt", on: devices.b) == ["edit B"])
        // The journal as a `kill -9` right after the version was made would leave it.
        let configuration = devices.b.configuration
        let journal = try SyncJournal(folder: configuration.journalFolder)
        let conflict = try #require(journal.conflicts.values.first)
        try journal.putConflict(JournalConflict(itemPath: conflict.itemPath, remotePath: conflict.remotePath, versionID: nil))
        let restarted = try SyncEngine(configuration: configuration, store: devices.store)
        let pass = await restarted.syncOnce()
        #expect(pass.failed.isEmpty, "\(pass.failed)")
        #expect(try devices.conflictTexts("n.txt", on: devices.b) == ["edit B"])
        let reopened = try SyncJournal(folder: configuration.journalFolder)
        #expect(reopened.conflicts[conflict.remotePath]?.versionID == conflict.versionID)
        // And the other device still gets exactly one.
        await devices.sync(devices.a)
        #expect(try devices.conflictTexts("n.txt", on: devices.a) == ["edit B"])
    }

    @Test("#12 deleting a local folder never follows a symbolic link to another folder")
    func folderDeletionDoesNotFollowLinks() throws {
        let scratch = try Scratch("engine-link")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let outside = scratch.url.appending(path: "outside")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        // Only a name the agent never syncs inside: a real folder like it would be removed.
        try Data("keep".utf8).write(to: outside.appending(path: ".stfolder"))
        #expect(symlink(outside.path, container.appending(path: "F").path) == 0)
        let local = LocalCoordination(container: container, timeout: .seconds(30))
        let gone = try local.delete("F", isFolder: true, expected: nil)
        #expect(!gone)
        #expect(FileManager.default.fileExists(atPath: outside.appending(path: ".stfolder").path))
    }
}
