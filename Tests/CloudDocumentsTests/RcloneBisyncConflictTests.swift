import Foundation
import Testing
@testable import CloudDocuments

// Real `rclone bisync` (1.60: conflict copies `NAME..path1` / `NAME..path2`, and no file keeps the
// real name) between two local folders (RcloneBisync, Tests/TestSupport). Each `run()` is one
// bisync run, as a timer would start it.

@Suite("Real rclone bisync: conflict copies become conflict versions", .serialized, .timeLimit(.minutes(1)),
       .enabled(if: RequiredTool.rclone.isInstalledOrRequired, Comment(rawValue: RequiredTool.rclone.missingMessage)))
struct RcloneBisyncConflictTests {
    @Test("a real bisync conflict renames both sides to NAME..path1 / NAME..path2, as SyncConflictNaming expects")
    func realConflictCopiesAreRecognised() async throws {
        _ = try RequiredTool.rclone.require()
        let clock = ContinuousClock()
        let began = clock.now
        try await RcloneBisync.with { bisync in
            let one = bisync.folder(.path1), two = bisync.folder(.path2)
            try put("base", at: one.appendingPathComponent("doc.txt"))
            try await bisync.run()
            #expect(text(at: two.appendingPathComponent("doc.txt")) == "base")

            try put("edit on path1", at: one.appendingPathComponent("doc.txt"))
            try put("edit on path2, longer", at: two.appendingPathComponent("doc.txt"))
            let run = clock.now
            let log = try await bisync.run()
            report("rclone bisync conflicting run took \(milliseconds(clock.now - run)) ms")
            #expect(log.contains("New or changed in both paths"))

            for folder in [one, two] {
                let copies = conflictCopies(of: "doc.txt", in: folder)
                #expect(copies.map(\.name) == ["doc.txt..path1", "doc.txt..path2"])
                #expect(copies.map(\.scheme) == [.rcloneBisyncPath, .rcloneBisyncPath])
                #expect(copies.map(\.number) == [1, 2])
                #expect(copies.allSatisfy { $0.savingComputer == nil })
                #expect(listing(folder) == ["doc.txt..path1", "doc.txt..path2", RcloneBisync.unchangedFileName])
                #expect(text(at: folder.appendingPathComponent("doc.txt..path1")) == "edit on path1")
                #expect(text(at: folder.appendingPathComponent("doc.txt..path2")) == "edit on path2, longer")
            }
        }
        report("test realConflictCopiesAreRecognised took \(milliseconds(clock.now - began)) ms")
    }

    @Test("documents open on both folders: the newer copy takes the real name, the other is a conflict version; resolving reaches the other folder with the next run")
    func conflictWithDocumentsOpenOnBothFolders() async throws {
        _ = try RequiredTool.rclone.require()
        let clock = ContinuousClock()
        let began = clock.now
        try await withPrivateVersionStore {
            try await RcloneBisync.with { bisync in
                let one = bisync.folder(.path1), two = bisync.folder(.path2)
                let url1 = one.appendingPathComponent("doc.txt"), url2 = two.appendingPathComponent("doc.txt")
                try put("base", at: url1)
                try await bisync.run()
                let document1 = NoteDocument(fileURL: url1), document2 = NoteDocument(fileURL: url2)
                try await document1.openThrowing()
                try await document2.openThrowing()

                document1.edit("edit on path1")
                try await document1.saveThrowing(to: url1, for: .forOverwriting)
                try await FileClock.waitUntilAfterModification(of: url1)
                document2.edit("edit on path2")                 // saved later: the newer copy
                try await document2.saveThrowing(to: url2, for: .forOverwriting)
                let run = clock.now
                try await bisync.run()
                let afterRun = clock.now - run

                // In each folder the newer copy (path2's) takes the real name, live, and the other
                // (path1's) stays as the one unresolved conflict version.
                for (folder, url, document) in [(one, url1, document1), (two, url2, document2)] {
                    let promoted = try await waitFor("doc.txt back in \(folder.lastPathComponent)", timeout: .seconds(10)) {
                        text(at: url) == "edit on path2"
                    }
                    let inConflict = try await waitFor("the document in \(folder.lastPathComponent) in conflict",
                                                       timeout: .seconds(10)) {
                        document.documentState.contains(.inConflict)
                    }
                    report("rclone: \(folder.lastPathComponent): real name back \(milliseconds(afterRun + promoted)) ms "
                           + "after the run started, .inConflict \(milliseconds(inConflict)) ms later")
                    #expect(document.fileURL.standardizedFileURL.path == url.standardizedFileURL.path)
                    #expect(!document.documentState.contains(.closed))
                    try await waitFor("the document in \(folder.lastPathComponent) to show the newer text",
                                      timeout: .seconds(10)) { document.text == "edit on path2" }
                    #expect(conflictCopies(of: "doc.txt", in: folder).map(\.name) == ["doc.txt..path1"])
                    let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
                    #expect(versions.count == 1)
                    let version = try #require(versions.first)
                    #expect(version.url.lastPathComponent == "doc.txt..path1")
                    #expect(version.isConflict && !version.isResolved)
                    #expect(version.localizedNameOfSavingComputer == nil)
                    #expect(text(at: version.url) == "edit on path1")
                }

                // Resolve in path1: the copy goes (coordinated), document 1 leaves .inConflict.
                let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url1).first)
                try version.resolve()
                #expect(conflictCopies(of: "doc.txt", in: one).isEmpty)
                try await waitFor("document 1 out of conflict", timeout: .seconds(5)) {
                    !document1.documentState.contains(.inConflict)
                }

                // The next run carries the resolution to path2: its copy goes, document 2 leaves
                // .inConflict, and both folders end with the newer text under the real name only.
                try await bisync.run()
                let cleared = try await waitFor("document 2 out of conflict", timeout: .seconds(10)) {
                    !document2.documentState.contains(.inConflict)
                }
                report("rclone: document 2 left .inConflict \(milliseconds(cleared)) ms after the next run")
                for folder in [one, two] {
                    #expect(listing(folder) == ["doc.txt", RcloneBisync.unchangedFileName])
                    #expect(text(at: folder.appendingPathComponent("doc.txt")) == "edit on path2")
                }
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: url2).isEmpty)
                // And a further run finds nothing to do: no conflict made again.
                let quiet = try await bisync.run()
                #expect(!quiet.contains("New or changed in both paths"))
                #expect(listing(two) == ["doc.txt", RcloneBisync.unchangedFileName])

                try await document1.closeThrowing()
                try await document2.closeThrowing()
            }
        }
        report("test conflictWithDocumentsOpenOnBothFolders took \(milliseconds(clock.now - began)) ms")
    }
}
