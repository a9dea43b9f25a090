import Foundation
import Testing
@testable import CloudDocuments

/// CloudDocuments' sync-tool rules as FileCoordination's change monitor and messenger ask them
/// (`SyncToolPolicy`, registered with `CoordinationRuntime`), and what FileCoordination does alone.
@Suite struct SyncToolPolicyTests {
    @Test("making a CloudDocument registers the sync-tool rules with every runtime of the process")
    func documentRegistersRules() {
        _ = CloudDocument(fileURL: URL(fileURLWithPath: "/nonexistent/registers.txt"))
        #expect(CoordinationRuntime.syncToolPolicy is SyncToolRules)
        let policy = CoordinationRuntime.syncToolPolicy
        #expect(policy.isHiddenFromPresenters(".syncthing.doc.txt.tmp"))
        #expect(policy.isHiddenFromPresenters("doc.sync-conflict-20250101-120000-ABCDEFG.txt"))
        #expect(!policy.isHiddenFromPresenters("doc.txt"))
    }

    @Test("a conflict copy as the monitor sees it: its original, the version identifier FileVersion uses, and whether the original is left missing",
          arguments: [
            ("doc.sync-conflict-20250101-120000-ABCDEFG.txt", false),  // Syncthing keeps the original
            ("doc.txt..path1", true),                                  // rclone bisync renames both sides
            ("doc.txt..path2", true),
          ])
    func monitoredCopy(_ name: String, leavesOriginalMissing: Bool) throws {
        let copy = try #require(SyncToolRules().conflictCopy(named: name))
        #expect(copy.name == name)
        #expect(copy.originalName == "doc.txt")
        #expect(copy.versionIdentifier == ConflictCopyIdentifier.identifier(forCopyNamed: name))
        #expect(copy.leavesOriginalMissing == leavesOriginalMissing)
        #expect(SyncToolRules().conflictCopy(named: name, amongOriginals: ["doc.txt"]) == copy)
    }

    @Test("sync tools' temporary and internal items are internal items; ordinary names are not", arguments: [
        (".syncthing.doc.txt.tmp", true), ("~syncthing~doc.txt.tmp", true), ("doc.txt.part", true),
        (".dat.nosync1a2b.Xyz", true), (".stfolder", true), ("doc.txt", false), ("notes.md", false),
    ])
    func internalItems(_ name: String, isInternal: Bool) {
        #expect(SyncToolRules().isInternalItem(named: name) == isInternal)
    }

    @Test("FileCoordination alone (no policy): every name is an ordinary item and nothing is settled")
    func noPolicy() {
        let none = NoSyncToolPolicy()
        for name in [".syncthing.doc.txt.tmp", "doc.sync-conflict-20250101-120000-ABCDEFG.txt", "doc.txt..path1", "doc.txt"] {
            #expect(!none.isInternalItem(named: name))
            #expect(none.conflictCopy(named: name) == nil)
            #expect(none.conflictCopy(named: name, amongOriginals: ["doc.txt"]) == nil)
            #expect(!none.mayBeConflictCopy(named: name, ofAnyOf: ["doc.txt"]))
            #expect(!none.isHiddenFromPresenters(name))
        }
    }
}
