import Foundation
import Testing
@testable import SyncAgent

/// What the planner does with a local side it could not fully read, and with many deletions made
/// here: nothing reaches the server on the word of a scan that did not see.
@Suite("Sync planner: unreadable folders and mass deletions here")
struct PlannerUncertainTests {
    typealias P = PlannerTests

    /// Ten synced files in `Photos/` and one elsewhere, all unchanged on the server.
    static func synced() -> (base: [String: JournalEntry], remote: [String: RemoteItem]) {
        let paths = (0..<10).map { "Photos/p\($0).jpg" } + ["notes.txt"]
        var base = Dictionary(uniqueKeysWithValues: paths.map { ($0, P.base($0)) })
        var remote = Dictionary(uniqueKeysWithValues: paths.map { ($0, P.remote($0)) })
        let folder = P.folder("Photos")
        base["Photos"] = folder.0
        remote["Photos"] = folder.2
        return (base, remote)
    }

    @Test("a folder that could not be listed is not read as its files deleted: nothing is deleted on the server")
    func unreadableFolder() {
        let (base, remote) = Self.synced()
        var input = SyncPlanInput(base: base, local: ["notes.txt": P.local("notes.txt"), "Photos": P.folder("Photos").1], remote: remote)
        input.localUncertain = ["Photos"]
        let plan = SyncPlanner().plan(input)
        #expect(plan.steps.isEmpty, "\(plan.steps)")
        #expect(plan.heldLocalDeletions.isEmpty)
    }

    @Test("a walk cut short (\"\" uncertain) deletes nothing on the server, and still uploads what it saw changed")
    func cutWalk() {
        let (base, remote) = Self.synced()
        var input = SyncPlanInput(base: base, local: ["notes.txt": P.local("notes.txt", 2)], remote: remote)
        input.localUncertain = [""]
        let plan = SyncPlanner().plan(input)
        #expect(plan.steps == [.upload("notes.txt")])
    }

    @Test("deleting most of the container here is held before it reaches the server, and goes once approved")
    func massDeletionHereIsHeld() {
        let (base, remote) = Self.synced()
        let local = ["notes.txt": P.local("notes.txt"), "Photos": P.folder("Photos").1]
        let plan = SyncPlanner().plan(SyncPlanInput(base: base, local: local, remote: remote))
        #expect(plan.heldLocalDeletions.count == 10)
        #expect(!plan.steps.contains { if case .deleteRemote = $0 { true } else { false } })
        let approved = SyncPlanner().plan(SyncPlanInput(base: base, local: local, remote: remote,
                                                        approvedDeletions: Set(plan.heldLocalDeletions)))
        #expect(approved.heldLocalDeletions.isEmpty)
        #expect(approved.steps.filter { if case .deleteRemote = $0 { true } else { false } }.count == 10)
    }

    @Test("isUnder: a path, what is inside it, and everything for \"\"", arguments: [
        ("Photos", ["Photos"], true), ("Photos/a", ["Photos"], true), ("Photos2/a", ["Photos"], false),
        ("x", [""], true), ("x", [], false),
    ])
    func isUnder(_ path: String, _ prefixes: [String], _ expected: Bool) {
        #expect(SyncPlanner.isUnder(path, prefixes) == expected)
    }
}
