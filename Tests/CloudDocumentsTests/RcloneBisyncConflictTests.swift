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
            let clock = ContinuousClock()
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
                #expect(listing(folder) == ["doc.txt..path1", "doc.txt..path2", RcloneBisync.unchangedFolderName])
                #expect(text(at: folder.appendingPathComponent("doc.txt..path1")) == "edit on path1")
                #expect(text(at: folder.appendingPathComponent("doc.txt..path2")) == "edit on path2, longer")
            }
        }
        report("test realConflictCopiesAreRecognised took \(milliseconds(clock.now - began)) ms")
    }

    @Test("a document open in path1, the other device writes path2: the newer copy takes the real name, the other is a conflict version; resolving reaches path2 with the next run")
    func conflictWithDocumentOpenInOneFolder() async throws {
        try await withDocInBothFolders(test: "conflictWithDocumentOpenInOneFolder") { bisync, url1, url2 in
            let one = bisync.folder(.path1), two = bisync.folder(.path2)
            let document = NoteDocument(fileURL: url1)
            try await document.openThrowing()

            document.edit("edit on path1")
            try await document.saveThrowing(to: url1, for: .forOverwriting)
            try await FileClock.waitUntilAfterModification(of: url1)
            try put("edit on path2", at: url2)                   // the newer one
            try await bisync.run()
            // rclone renamed the document's file to doc.txt..path1 and left no doc.txt.
            try await expectPromotion(in: one, of: "edit on path2", document: document)
            try await expectConflictVersion(of: url1, named: "doc.txt..path1", holding: "edit on path1")

            // Remove the conflict version (keeping the current text): the copy goes (coordinated),
            // the document leaves .inConflict.
            let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url1).first)
            try version.remove()
            #expect(conflictCopies(of: "doc.txt", in: one).isEmpty)
            try await waitFor("the document out of conflict", timeout: .seconds(5)) {
                !document.documentState.contains(.inConflict)
            }

            // The next run carries promotion and resolution to path2; a further run finds
            // nothing to do.
            try await bisync.run()
            for folder in [one, two] {
                #expect(listing(folder) == ["doc.txt", RcloneBisync.unchangedFolderName])
                #expect(text(at: folder.appendingPathComponent("doc.txt")) == "edit on path2")
            }
            let quiet = try await bisync.run()
            #expect(!quiet.contains("New or changed in both paths"))
            #expect(document.text == "edit on path2" && document.documentState == .normal)
            try await document.closeThrowing()
        }
    }

    @Test("documents open in both folders: both get the newer text and .inConflict; resolving in path1 reaches path2 with the next run")
    func conflictWithDocumentsOpenInBothFolders() async throws {
        try await withDocInBothFolders(test: "conflictWithDocumentsOpenInBothFolders") { bisync, url1, url2 in
            let one = bisync.folder(.path1), two = bisync.folder(.path2)
            let document1 = NoteDocument(fileURL: url1), document2 = NoteDocument(fileURL: url2)
            try await document1.openThrowing()
            try await document2.openThrowing()

            document1.edit("edit on path1")
            try await document1.saveThrowing(to: url1, for: .forOverwriting)
            try await FileClock.waitUntilAfterModification(of: url1)
            document2.edit("edit on path2")                      // the newer one
            try await document2.saveThrowing(to: url2, for: .forOverwriting)
            try await bisync.run()

            for (folder, url, document) in [(one, url1, document1), (two, url2, document2)] {
                try await expectPromotion(in: folder, of: "edit on path2", document: document)
                try await expectConflictVersion(of: url, named: "doc.txt..path1", holding: "edit on path1")
            }

            let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url1).first)
            try version.resolve()
            try await waitFor("document 1 out of conflict", timeout: .seconds(5)) {
                !document1.documentState.contains(.inConflict)
            }

            // The next run should carry the resolution to path2: its copy goes, document 2 leaves
            // .inConflict, and both folders end with the newer text under the real name only.
            // Known issue: both folders promoted the newer copy, so doc.txt is new on both sides
            // — rclone 1.60 compares only with its last listing, calls that a new conflict, and
            // together with the resolved copy's deletion ends "out of sync, must run --resync".
            await withKnownIssue("""
                rclone 1.60 bisync: a promotion made in both folders between two runs is a new conflict                     (doc.txt new on both sides), and with the resolution the run fails: must --resync
                """) {
                let log = try await bisync.run()
                #expect(!log.contains("New or changed in both paths"),
                        "both folders' promotions must not make a new conflict:\n\(log)")
                let cleared = try await waitFor("document 2 out of conflict", timeout: .seconds(10)) {
                    !document2.documentState.contains(.inConflict)
                }
                report("rclone: document 2 left .inConflict \(milliseconds(cleared)) ms after the next run")
                for folder in [one, two] {
                    #expect(listing(folder) == ["doc.txt", RcloneBisync.unchangedFolderName])
                    #expect(text(at: folder.appendingPathComponent("doc.txt")) == "edit on path2")
                }
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: url2).isEmpty)
                let quiet = try await bisync.run()
                #expect(!quiet.contains("New or changed in both paths"))
            }

            try await document1.closeThrowing()
            try await document2.closeThrowing()
        }
    }

    /// After a conflicting run: `newerText` gets the real name back in `folder` — live, or at the
    /// latest on a query of the versions — and the open `document` stays the document of that
    /// name, gains `.inConflict` and shows `newerText`.
    private func expectPromotion(in folder: URL, of newerText: String, document: NoteDocument,
                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let url = folder.appendingPathComponent("doc.txt")
        let clock = ContinuousClock()
        let start = clock.now
        let live = (try? await waitFor("doc.txt back in \(folder.lastPathComponent)", timeout: .seconds(2)) {
            text(at: url) == newerText
        }) != nil
        if !live { _ = try FileVersion.unresolvedConflictVersionsOfItem(at: url) }
        #expect(text(at: url) == newerText, sourceLocation: sourceLocation)
        let inConflict = try await waitFor("the document in \(folder.lastPathComponent) in conflict",
                                           timeout: .seconds(10)) { document.documentState.contains(.inConflict) }
        report("rclone: \(folder.lastPathComponent): real name back \(live ? "live" : "on the query") after "
               + "\(milliseconds(clock.now - start - inConflict)) ms, .inConflict \(milliseconds(inConflict)) ms later")
        #expect(document.fileURL.standardizedFileURL.path == url.standardizedFileURL.path, sourceLocation: sourceLocation)
        #expect(!document.documentState.contains(.closed), sourceLocation: sourceLocation)
        try await waitFor("the document in \(folder.lastPathComponent) to show the newer text", timeout: .seconds(10)) {
            document.text == newerText
        }
    }

    /// `url` has exactly one unresolved conflict version: the copy `name` beside it, holding `text`.
    private func expectConflictVersion(of url: URL, named name: String, holding text: String,
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let folder = url.deletingLastPathComponent()
        #expect(conflictCopies(of: url.lastPathComponent, in: folder).map(\.name) == [name], sourceLocation: sourceLocation)
        let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
        #expect(versions.count == 1, sourceLocation: sourceLocation)
        let version = try #require(versions.first, sourceLocation: sourceLocation)
        #expect(version.url.lastPathComponent == name, sourceLocation: sourceLocation)
        #expect(version.isConflict && !version.isResolved, sourceLocation: sourceLocation)
        #expect(version.localizedNameOfSavingComputer == nil, sourceLocation: sourceLocation)
        #expect(CloudDocumentsTests.text(at: version.url) == text, sourceLocation: sourceLocation)
    }
}

extension RcloneBisyncConflictTests {
    /// Runs `body` with a private version store and two folders kept by `rclone bisync`, both
    /// holding `doc.txt` ("base") after a first run; then reports how long the whole test took.
    func withDocInBothFolders(test name: String,
                              _ body: (_ bisync: RcloneBisync, _ url1: URL, _ url2: URL) async throws -> Void) async throws {
        _ = try RequiredTool.rclone.require()
        let clock = ContinuousClock()
        let began = clock.now
        try await withPrivateVersionStore {
            try await RcloneBisync.with { bisync in
                let url1 = bisync.folder(.path1).appendingPathComponent("doc.txt")
                let url2 = bisync.folder(.path2).appendingPathComponent("doc.txt")
                try put("base", at: url1)
                try await bisync.run()
                try await body(bisync, url1, url2)
            }
        }
        report("test \(name) took \(milliseconds(clock.now - began)) ms")
    }
}
