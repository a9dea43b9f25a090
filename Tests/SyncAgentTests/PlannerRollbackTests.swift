import Foundation
import Testing
@testable import SyncAgent

/// A server put back to an older copy shows a file's earlier tag again; the planner then treats
/// it as a new server (nothing deleted on either side, differing files become conflicts).
@Suite("Sync planner: a server rolled back to an older copy")
struct PlannerRollbackTests {
    @Test("an entry remembers the tags it had before; the new tag is never in its own history")
    func entryRemembersEarlierTags() {
        let first = PlannerTests.base("f", tag: "t1")
        let second = PlannerTests.base("f", tag: "t2").remembering(first)
        #expect(second.previousTags == ["\"t1\""])
        let back = PlannerTests.base("f", tag: "t1").remembering(second)
        #expect(back.previousTags == ["\"t2\""])
    }

    @Test("an earlier tag back on the server: no deletion here, the edited file is a conflict")
    func earlierTagMeansRollback() {
        var edited = PlannerTests.base("edited", tag: "t2")
        edited.previousTags = ["\"t1\""]
        let input = SyncPlanInput(base: ["edited": edited, "new": PlannerTests.base("new", tag: "n1")],
                                  local: ["edited": PlannerTests.local("edited"), "new": PlannerTests.local("new")],
                                  remote: ["edited": PlannerTests.remote("edited", tag: "t1")])
        let plan = SyncPlanner().plan(input)
        #expect(plan.serverReplaced)
        #expect(plan.steps.contains(.conflict("edited")))
        #expect(plan.steps.contains(.upload("new")))
        #expect(!plan.steps.contains { if case .deleteLocal = $0 { true } else { false } })
    }

    @Test("without an earlier tag coming back, a file missing on the server is deleted here as usual")
    func ordinaryDeletion() {
        let input = SyncPlanInput(base: ["edited": PlannerTests.base("edited", tag: "t2"), "gone": PlannerTests.base("gone")],
                                  local: ["edited": PlannerTests.local("edited"), "gone": PlannerTests.local("gone")],
                                  remote: ["edited": PlannerTests.remote("edited", tag: "t2")])
        let plan = SyncPlanner().plan(input)
        #expect(!plan.serverReplaced)
        #expect(plan.steps.contains(.deleteLocal("gone")))
    }
}
