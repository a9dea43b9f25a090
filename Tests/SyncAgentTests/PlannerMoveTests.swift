import Foundation
import Testing
@testable import SyncAgent

@Suite("Sync planner: moves")
struct PlannerMoveTests {
    static let known = LocalFingerprint(size: 5, modifiedNanoseconds: 100, inode: 9, changedNanoseconds: 100)
    static let tag = RemoteTag(strong: "\"t1\"")

    static func base(_ path: String) -> JournalEntry {
        JournalEntry(path: path, isFolder: false, local: known, remoteTag: tag, fileID: "id-1")
    }

    static func remote(_ path: String, tag: RemoteTag = tag, fileID: String? = "id-1") -> RemoteItem {
        RemoteItem(path: RemotePath(path) ?? .root, isFolder: false, tag: tag, size: 5, modified: nil, fileID: fileID)
    }

    static func other() -> (JournalEntry, LocalItem, RemoteItem) {
        let print = LocalFingerprint(size: 1, modifiedNanoseconds: 1, inode: 1, changedNanoseconds: 1)
        return (JournalEntry(path: "other", isFolder: false, local: print, remoteTag: RemoteTag(strong: "\"o\"")),
                LocalItem(path: "other", isFolder: false, fingerprint: print),
                RemoteItem(path: RemotePath("other") ?? .root, isFolder: false, tag: RemoteTag(strong: "\"o\""), size: 1, modified: nil))
    }

    @Test("renamed here (same inode, size and time; a new change time): a remote move")
    func localRename() {
        var renamed = Self.known
        renamed.changedNanoseconds = 200
        let (otherBase, otherLocal, otherRemote) = Self.other()
        let input = SyncPlanInput(base: ["a.txt": Self.base("a.txt"), "other": otherBase],
                                  local: ["b.txt": LocalItem(path: "b.txt", isFolder: false, fingerprint: renamed), "other": otherLocal],
                                  remote: ["a.txt": Self.remote("a.txt"), "other": otherRemote])
        #expect(SyncPlanner().plan(input).steps == [.moveRemote(from: "a.txt", to: "b.txt")])
    }

    @Test("renamed here and edited there: not a move (an upload of the new name, a download of the edit)")
    func localRenameRemoteEdit() {
        let (otherBase, otherLocal, otherRemote) = Self.other()
        let input = SyncPlanInput(base: ["a.txt": Self.base("a.txt"), "other": otherBase],
                                  local: ["b.txt": LocalItem(path: "b.txt", isFolder: false, fingerprint: Self.known), "other": otherLocal],
                                  remote: ["a.txt": Self.remote("a.txt", tag: RemoteTag(strong: "\"t2\"")), "other": otherRemote])
        #expect(SyncPlanner().plan(input).steps == [.download("a.txt"), .upload("b.txt")])
    }

    @Test("renamed on the server (same file id and tag), unchanged here: a local move")
    func remoteRename() {
        let (otherBase, otherLocal, otherRemote) = Self.other()
        let input = SyncPlanInput(base: ["a.txt": Self.base("a.txt"), "other": otherBase],
                                  local: ["a.txt": LocalItem(path: "a.txt", isFolder: false, fingerprint: Self.known), "other": otherLocal],
                                  remote: ["d/b.txt": Self.remote("d/b.txt"), "other": otherRemote,
                                           "d": RemoteItem(path: RemotePath("d") ?? .root, isFolder: true, tag: nil, size: nil, modified: nil)])
        #expect(SyncPlanner().plan(input).steps == [.makeLocalFolder("d"), .moveLocal(from: "a.txt", to: "d/b.txt")])
    }

    @Test("without file ids a server rename is a deletion and a download")
    func remoteRenameWithoutIDs() {
        let (otherBase, otherLocal, otherRemote) = Self.other()
        let input = SyncPlanInput(base: ["a.txt": Self.base("a.txt"), "other": otherBase],
                                  local: ["a.txt": LocalItem(path: "a.txt", isFolder: false, fingerprint: Self.known), "other": otherLocal],
                                  remote: ["b.txt": Self.remote("b.txt", fileID: "id-2"), "other": otherRemote])
        #expect(SyncPlanner().plan(input).steps == [.download("b.txt"), .deleteLocal("a.txt")])
    }
}
