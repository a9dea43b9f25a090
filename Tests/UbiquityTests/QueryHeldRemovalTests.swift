import Foundation
import Glibc
import Testing
@testable import Ubiquity

/// A live query holds a removal a moment (issue 16, items 5 and 7): a file deleted and put back
/// under its name (Syncthing's way of delivering an update), and a rename whose second half is
/// read late, are one change each — never a removal while the item exists — and the hold delays
/// nothing else. Most tests use a hold far longer than the test, so that what they check cannot
/// depend on timing: the hold ends because the name came back, not because time passed.
@Suite struct QueryHeldRemovalTests {
    private static let longHold: Duration = .seconds(600)

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test("a file replaced as Syncthing delivers an update (temporary file, delete, rename into place) is one change, same identifier, never removed")
    func syncthingReplaceIsOneChange() throws {
        let folder = try Scratch("query-replace")
        defer { folder.remove() }
        try folder.write("old", at: "doc.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)], removalHold: Self.longHold)
        let original = try #require(query.results.first { $0.name == "doc.txt" })
        let target = folder.path + "/doc.txt"
        // Syncthing's temporary names: hidden on Linux, `~syncthing~…` on Windows (an internal item).
        for (round, temporary) in [".syncthing.doc.txt.tmp", "~syncthing~doc.txt.tmp"].enumerated() {
            let contents = String(repeating: "new", count: round + 2)
            try write(contents, to: folder.path + "/" + temporary)
            #expect(unlink(target) == 0)
            query.settle()
            recorder.drain()
            #expect(recorder.merged.removed.isEmpty, "the deletion is not reported while the name may come back")
            #expect(query.results.map(\.name) == ["doc.txt"])
            #expect(rename(folder.path + "/" + temporary, target) == 0)
            #expect(recorder.waitForUpdates { $0.changed.contains { $0.name == "doc.txt" && $0.size == Int64(contents.utf8.count) } })
        }
        query.settle()
        recorder.drain()
        let merged = recorder.merged
        #expect(merged.removed.isEmpty)
        #expect(merged.added.isEmpty)
        #expect(!merged.changed.isEmpty && merged.changed.allSatisfy { $0.id == original.id && $0.name == "doc.txt" })
        #expect(query.results.map(\.id) == [original.id])
        #expect(query.results.first?.size == 9)
        query.stop()
    }

    @Test("a deletion is held without holding anything else back, and reported once when the hold ends")
    func heldDeletionDelaysNothingElse() throws {
        let folder = try Scratch("query-held-delete")
        defer { folder.remove() }
        try folder.write("a", at: "a.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)], removalHold: Self.longHold)
        #expect(unlink(folder.path + "/a.txt") == 0)
        try folder.write("b", at: "b.txt")
        #expect(recorder.waitForUpdates { $0.added.map(\.name) == ["b.txt"] })
        recorder.drain()
        #expect(recorder.merged.removed.isEmpty)
        #expect(Set(query.results.map(\.name)) == ["a.txt", "b.txt"])
        query.stop()

        // The default hold (as long as the presenters' change monitor's) ends by itself.
        let second = QueryRecorder()
        let live = try second.startQuery([.folder(folder.url)])
        let b = try #require(live.results.first { $0.name == "b.txt" })
        #expect(unlink(folder.path + "/b.txt") == 0)
        #expect(second.waitForUpdates { $0.removed.contains { $0.id == b.id } })
        live.settle()
        second.drain()
        #expect(second.merged.removed.map(\.id) == [b.id])
        #expect(second.merged.added.isEmpty && second.merged.changed.isEmpty)
        #expect(live.results.isEmpty)
        live.stop()
    }

    @Test("a file deleted and written anew under its name is a change; one replaced by a folder is removed and the folder added")
    func deletedAndWrittenAgain() throws {
        let folder = try Scratch("query-rewrite")
        defer { folder.remove() }
        try folder.write("first", at: "notes.txt")
        try folder.write("x", at: "box")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)], removalHold: Self.longHold)
        let notes = try #require(query.results.first { $0.name == "notes.txt" })
        let box = try #require(query.results.first { $0.name == "box" })
        #expect(unlink(folder.path + "/notes.txt") == 0)
        try write("second version", to: folder.path + "/notes.txt")
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.id == notes.id && $0.size == 14 } })
        #expect(unlink(folder.path + "/box") == 0)
        #expect(mkdir(folder.path + "/box", 0o755) == 0)
        #expect(recorder.waitForUpdates { $0.removed.contains { $0.id == box.id } && $0.added.contains { $0.name == "box" && $0.isFolder } })
        query.settle()
        recorder.drain()
        #expect(!recorder.merged.removed.contains { $0.id == notes.id })
        #expect(Set(query.results.map(\.name)) == ["notes.txt", "box"])
        query.stop()
    }

    @Test("a conflict resolved by replacing the original as Syncthing does leaves it listed, changed, without conflicts")
    func conflictResolutionNeverRemoves() throws {
        let folder = try Scratch("query-resolve")
        defer { folder.remove() }
        let copy = "doc.sync-conflict-20240101-120000-ABCDEFG.txt"
        try folder.write("mine", at: "doc.txt")
        try folder.write("theirs", at: copy)
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)], removalHold: Self.longHold)
        let doc = try #require(query.results.first { $0.name == "doc.txt" })
        #expect(doc.hasUnresolvedConflicts)
        // The resolution as it reaches this machine: the chosen contents delivered over the
        // original (temporary file, delete, rename), the conflict copy deleted.
        try write("resolved", to: folder.path + "/.syncthing.doc.txt.tmp")
        #expect(unlink(folder.path + "/doc.txt") == 0)
        #expect(rename(folder.path + "/.syncthing.doc.txt.tmp", folder.path + "/doc.txt") == 0)
        #expect(unlink(folder.path + "/" + copy) == 0)
        #expect(recorder.waitForUpdates { $0.changed.contains { $0.id == doc.id && $0.size == 8 && !$0.hasUnresolvedConflicts } })
        query.settle()
        recorder.drain()
        #expect(recorder.merged.removed.isEmpty && recorder.merged.added.isEmpty)
        #expect(query.results.map(\.id) == [doc.id])
        #expect(query.results.first?.hasUnresolvedConflicts == false)
        query.stop()
    }

    @Test("a rename whose second half is read after the first (a busy machine) is one change; other changes go on meanwhile")
    func renameHalvesReadApart() throws {
        let folder = try Scratch("query-rename-halves")
        defer { folder.remove() }
        try folder.write("a", at: "a.txt")
        try folder.write("d", at: "sub/d.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url)], removalHold: Self.longHold)
        let a = try #require(query.results.first { $0.name == "a.txt" })
        let sub = try #require(query.results.first { $0.name == "sub" })
        let d = try #require(query.results.first { $0.name == "d.txt" })
        query.setAsideSecondHalvesOfRenamesForTesting(true)
        #expect(rename(folder.path + "/a.txt", folder.path + "/b.txt") == 0)
        #expect(rename(folder.path + "/sub", folder.path + "/moved") == 0)
        try write("c", to: folder.path + "/c.txt")    // created in place: no rename
        #expect(recorder.waitForUpdates { $0.added.map(\.name) == ["c.txt"] })
        query.settle()
        recorder.drain()
        #expect(recorder.merged.removed.isEmpty, "a first half read alone is not a removal")
        #expect(Set(query.results.map(\.name)) == ["a.txt", "sub", "d.txt", "c.txt"])

        query.setAsideSecondHalvesOfRenamesForTesting(false)
        query.applySecondHalvesOfRenamesForTesting()
        #expect(recorder.waitForUpdates { update in
            update.changed.contains { $0.id == a.id && $0.name == "b.txt" }
                && update.changed.contains { $0.id == sub.id && $0.name == "moved" }
                && update.changed.contains { $0.id == d.id && $0.path == folder.path + "/moved/d.txt" }
        })
        query.settle()
        recorder.drain()
        #expect(recorder.merged.removed.isEmpty)
        #expect(recorder.merged.added.map(\.name) == ["c.txt"])
        #expect(Set(query.results.map(\.name)) == ["b.txt", "moved", "d.txt", "c.txt"])
        // Still live in the moved folder.
        try folder.write("e", at: "moved/e.txt")
        #expect(recorder.waitForUpdates { $0.added.contains { $0.name == "e.txt" } })
        query.stop()
    }

    @Test("moved out of the scopes: removed when the hold ends; renamed to a hidden name: removed at once")
    func movedAwayIsRemoved() throws {
        let folder = try Scratch("query-moved-away")
        defer { folder.remove() }
        try folder.write("a", at: "scope/a.txt")
        try folder.write("b", at: "scope/b.txt")
        let recorder = QueryRecorder()
        let query = try recorder.startQuery([.folder(folder.url.appending(path: "scope"))])
        let a = try #require(query.results.first { $0.name == "a.txt" })
        let b = try #require(query.results.first { $0.name == "b.txt" })
        #expect(rename(folder.path + "/scope/a.txt", folder.path + "/a.txt") == 0)
        #expect(recorder.waitForUpdates { $0.removed.map(\.id) == [a.id] })
        query.stop()

        let hidden = QueryRecorder()
        let held = try hidden.startQuery([.folder(folder.url.appending(path: "scope"))], removalHold: Self.longHold)
        let heldB = try #require(held.results.first { $0.name == "b.txt" })
        #expect(heldB.name == b.name)
        #expect(rename(folder.path + "/scope/b.txt", folder.path + "/scope/.b.txt") == 0)
        #expect(hidden.waitForUpdates { $0.removed.map(\.id) == [heldB.id] })
        #expect(held.results.isEmpty)
        held.stop()
    }
}
