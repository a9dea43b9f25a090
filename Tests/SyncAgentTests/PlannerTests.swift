import Foundation
import Testing
@testable import SyncAgent

@Suite("Sync planner")
struct PlannerTests {
    static func fingerprint(_ version: Int64) -> LocalFingerprint {
        LocalFingerprint(size: version, modifiedNanoseconds: version, inode: 1, changedNanoseconds: version)
    }

    static func base(_ path: String, local: Int64 = 1, tag: String = "t1") -> JournalEntry {
        JournalEntry(path: path, isFolder: false, local: fingerprint(local), remoteTag: RemoteTag(strong: "\"\(tag)\""))
    }

    static func local(_ path: String, _ version: Int64 = 1) -> LocalItem {
        LocalItem(path: path, isFolder: false, fingerprint: fingerprint(version))
    }

    static func remote(_ path: String, tag: String = "t1") -> RemoteItem {
        RemoteItem(path: RemotePath(path) ?? .root, isFolder: false, tag: RemoteTag(strong: "\"\(tag)\""), size: 1, modified: nil)
    }

    static func folder(_ path: String) -> (JournalEntry, LocalItem, RemoteItem) {
        (JournalEntry(path: path, isFolder: true, local: nil, remoteTag: nil),
         LocalItem(path: path, isFolder: true, fingerprint: fingerprint(0)),
         RemoteItem(path: RemotePath(path) ?? .root, isFolder: true, tag: nil, size: nil, modified: nil))
    }

    /// One row: what the journal, the local side and the server have for `f`; the step expected.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var base: JournalEntry?
        var local: LocalItem?
        var remote: RemoteItem?
        var expected: SyncStep?
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "new here", base: nil, local: local("f"), remote: nil, expected: .upload("f")),
        Row(name: "new there", base: nil, local: nil, remote: remote("f"), expected: .download("f")),
        Row(name: "new on both", base: nil, local: local("f"), remote: remote("f"), expected: .conflict("f")),
        Row(name: "unchanged", base: base("f"), local: local("f"), remote: remote("f"), expected: nil),
        Row(name: "edited here", base: base("f"), local: local("f", 2), remote: remote("f"), expected: .upload("f")),
        Row(name: "edited there", base: base("f"), local: local("f"), remote: remote("f", tag: "t2"), expected: .download("f")),
        Row(name: "edited on both", base: base("f"), local: local("f", 2), remote: remote("f", tag: "t2"), expected: .conflict("f")),
        Row(name: "deleted here", base: base("f"), local: nil, remote: remote("f"), expected: .deleteRemote("f")),
        Row(name: "deleted there", base: base("f"), local: local("f"), remote: nil, expected: .deleteLocal("f")),
        Row(name: "edited here, deleted there: the edit wins", base: base("f"), local: local("f", 2), remote: nil, expected: .upload("f")),
        Row(name: "deleted here, edited there: the edit wins", base: base("f"), local: nil, remote: remote("f", tag: "t2"), expected: .download("f")),
        Row(name: "deleted on both", base: base("f"), local: nil, remote: nil, expected: .forget("f")),
        Row(name: "a file here, a folder there", base: nil, local: local("f"), remote: folder("f").2, expected: .kindClash("f")),
        Row(name: "a folder new here", base: nil, local: folder("f").1, remote: nil, expected: .makeRemoteFolder("f")),
        Row(name: "a folder new there", base: nil, local: nil, remote: folder("f").2, expected: .makeLocalFolder("f")),
        Row(name: "a folder on both, not journaled", base: nil, local: folder("f").1, remote: folder("f").2, expected: .recordFolder("f")),
        Row(name: "a folder deleted there", base: folder("f").0, local: folder("f").1, remote: nil, expected: .deleteLocal("f")),
        Row(name: "a folder deleted here", base: folder("f").0, local: nil, remote: folder("f").2, expected: .deleteRemote("f")),
    ]

    @Test("one item: the table", arguments: rows)
    func table(_ row: Row) {
        let input = SyncPlanInput(base: row.base.map { ["f": $0] } ?? [:], local: row.local.map { ["f": $0] } ?? [:],
                                  remote: row.remote.map { ["f": $0] } ?? [:])
        // A lone file deleted here leaves the root empty: add an unrelated synced item.
        var padded = input
        padded.base["other"] = Self.base("other")
        padded.local?["other"] = Self.local("other")
        padded.remote["other"] = Self.remote("other")
        let plan = SyncPlanner().plan(padded)
        #expect(plan.refusal == nil)
        #expect(plan.steps == (row.expected.map { [$0] } ?? []))
    }

    @Test("the same input gives the same plan, folders made first and deleted last")
    func orderAndDeterminism() {
        let (_, localFolder, _) = Self.folder("d")
        let (baseGone, _, remoteGone) = Self.folder("gone")
        let input = SyncPlanInput(
            base: ["gone": baseGone, "gone/x": Self.base("gone/x")],
            local: ["d": localFolder, "d/new": Self.local("d/new", 7)],
            remote: ["gone": remoteGone, "gone/x": Self.remote("gone/x")])
        let plan = SyncPlanner().plan(input)
        #expect(plan.steps == [.makeRemoteFolder("d"), .upload("d/new"), .deleteRemote("gone/x"), .deleteRemote("gone")])
        #expect(SyncPlanner().plan(input) == plan)
    }

    @Test("a folder deleted on one side is kept when something below it arrives")
    func folderKeptForNewChild() {
        let (folderBase, _, remoteFolder) = Self.folder("d")
        let input = SyncPlanInput(base: ["d": folderBase, "other": Self.base("other")],
                                  local: ["other": Self.local("other")],
                                  remote: ["d": remoteFolder, "d/new": Self.remote("d/new"), "other": Self.remote("other")])
        #expect(SyncPlanner().plan(input).steps == [.makeLocalFolder("d"), .download("d/new")])
    }

    static func synced(_ count: Int) -> SyncPlanInput {
        var input = SyncPlanInput(base: [:], local: [:], remote: [:])
        for index in 0..<count {
            let path = "f\(index)"
            input.base[path] = base(path)
            input.local?[path] = local(path)
            input.remote[path] = remote(path)
        }
        return input
    }

    @Test("the server deleting more than half of the items is held until approved")
    func heldDeletion() {
        var input = Self.synced(10)
        for index in 0..<6 { input.remote["f\(index)"] = nil }
        let plan = SyncPlanner().plan(input)
        #expect(plan.steps.isEmpty)
        #expect(plan.heldDeletions == (0..<6).map { "f\($0)" })
        input.approvedDeletions = Set(plan.heldDeletions)
        let approved = SyncPlanner().plan(input)
        #expect(approved.heldDeletions.isEmpty)
        #expect(approved.steps.count == 6)
    }

    @Test("half or less, or fewer than the minimum, is ordinary work; more than 100 is held whatever the share")
    func deletionThresholds() {
        var half = Self.synced(10)
        for index in 0..<5 { half.remote["f\(index)"] = nil }
        #expect(SyncPlanner().plan(half).heldDeletions.isEmpty)
        var small = Self.synced(3)
        for index in 0..<3 { small.remote["f\(index)"] = nil }
        #expect(SyncPlanner().plan(small).heldDeletions.isEmpty)
        var many = Self.synced(400)
        for index in 0..<101 { many.remote["f\(index)"] = nil }
        #expect(SyncPlanner().plan(many).heldDeletions.count == 101)
    }

    @Test("a deletion run seen a few items per pass: the deletions earlier passes carried out count, and the rest is held")
    func deletionBurstIsHeld() {
        // Four of ten already deleted here by earlier passes (six left); three more now: 7 of 10.
        var input = Self.synced(6)
        for index in 0..<3 { input.remote["f\(index)"] = nil }
        #expect(SyncPlanner().plan(input).heldDeletions.isEmpty, "alone, 3 of 6 is ordinary work")
        input.earlierServerDeletions = 4
        #expect(SyncPlanner().plan(input).heldDeletions == ["f0", "f1", "f2"])
        // Deletions made here count only toward deletions made here.
        input.earlierServerDeletions = 0
        input.earlierLocalDeletions = 4
        #expect(SyncPlanner().plan(input).heldDeletions.isEmpty)
    }

    @Test("the burst window forgets deletions older than it")
    func deletionBurstWindow() {
        var burst = DeletionBurst()
        let start = ContinuousClock.now
        for _ in 0..<3 { burst.record(fromServer: true, at: start) }
        burst.record(fromServer: false, at: start + .seconds(100))
        #expect(burst.counts(window: 120, now: start + .seconds(110)) == (3, 1))
        #expect(burst.counts(window: 120, now: start + .seconds(130)) == (0, 1))
        #expect(burst.counts(window: 120, now: start + .seconds(300)) == (0, 0))
    }

    @Test("a missing or emptied local root is refused, never read as deletions")
    func missingRoot() {
        var input = Self.synced(3)
        input.local = nil
        let missing = SyncPlanner().plan(input)
        #expect(missing.refusal != nil && missing.steps.isEmpty)
        input.local = [:]
        let emptied = SyncPlanner().plan(input)
        #expect(emptied.refusal != nil && emptied.steps.isEmpty)
        input.approvedEmptyRoot = true
        #expect(SyncPlanner().plan(input).steps.count == 3)
    }

    @Test("a server whose known files mostly carry unseen tags is a new server: nothing deleted, differences are conflicts")
    func replacedServer() {
        var input = Self.synced(10)
        for index in 0..<10 { input.remote["f\(index)"] = Self.remote("f\(index)", tag: "old\(index)") }
        input.remote["f9"] = nil       // missing there: not deleted here
        input.local?["f8"] = nil       // missing here: not deleted there
        input.local?["f1"] = Self.local("f1", 5)
        let plan = SyncPlanner().plan(input)
        #expect(plan.serverReplaced)
        #expect(!plan.steps.contains { if case .deleteLocal = $0 { true } else if case .deleteRemote = $0 { true } else { false } })
        #expect(plan.steps.contains(.upload("f9")))
        #expect(plan.steps.contains(.download("f8")))
        #expect(plan.steps.contains(.conflict("f1")))
        #expect(plan.steps.contains(.conflict("f0")))
    }

    @Test("a root whose identity changed is a new server")
    func rootIdentity() {
        var input = Self.synced(2)
        input.knownRootFileID = "1"
        input.remoteRootFileID = "2"
        #expect(SyncPlanner().plan(input).serverReplaced)
        input.remoteRootFileID = "1"
        #expect(!SyncPlanner().plan(input).serverReplaced)
    }

    @Test("one device editing every file of a small container is not a replaced server")
    func smallContainerEdits() {
        var input = Self.synced(3)
        for index in 0..<3 { input.remote["f\(index)"] = Self.remote("f\(index)", tag: "t2") }
        let plan = SyncPlanner().plan(input)
        #expect(!plan.serverReplaced)
        #expect(plan.steps == [.download("f0"), .download("f1"), .download("f2")])
    }

    @Test("a tag that turned from weak to strong with the same value is not a change; a missing tag always is")
    func weakThenStrong() {
        var input = Self.synced(2)
        input.base["f0"]?.remoteTag = RemoteTag(parsing: "W/\"t1\"")
        #expect(SyncPlanner().plan(input).steps.isEmpty)
        input.remote["f1"]?.tag = nil
        #expect(SyncPlanner().plan(input).steps == [.download("f1")])
    }
}
