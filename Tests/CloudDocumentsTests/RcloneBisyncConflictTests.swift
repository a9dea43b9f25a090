import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

// Real `rclone bisync` (1.60: conflict copies `NAME..path1` / `NAME..path2`, and no file keeps the
// real name) between two local folders (RcloneBisync, Tests/TestSupport). Each `run()` is one
// bisync run, as a timer would start it.

@Suite("Real rclone bisync: conflict copies become conflict versions", .serialized, .timeLimit(.minutes(1 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.rclone.isInstalledOrRequired, Comment(rawValue: RequiredTool.rclone.missingMessage)))
struct RcloneBisyncConflictTests {
    @Test("a real bisync conflict renames both sides to NAME..path1 / NAME..path2, as SyncConflictNaming expects")
    func realConflictCopiesAreRecognised() async throws {
        _ = try RequiredTool.rclone.require()
        try await RcloneBisync.with { bisync in
            let one = bisync.folder(.path1), two = bisync.folder(.path2)
            try put("base", at: one.appendingPathComponent("doc.txt"))
            try await bisync.run()
            #expect(text(at: two.appendingPathComponent("doc.txt")) == "base")

            try put("edit on path1", at: one.appendingPathComponent("doc.txt"))
            try put("edit on path2, longer", at: two.appendingPathComponent("doc.txt"))
            let log = try await bisync.run()
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
    }

    @Test("a document open in path1, the other device writes path2: the newer copy takes the real name, the other is a conflict version; resolving reaches path2 with the next run")
    func conflictWithDocumentOpenInOneFolder() async throws {
        try await withDocInBothFolders { bisync, url1, url2 in
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
            try await Polling.until("the document out of conflict") {
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

    /// Both folders' documents promote the newer copy: `doc.txt` is then new in both folders since
    /// bisync's last listing, which rclone 1.60 (comparing only with that listing) calls a new
    /// conflict — even for the same bytes and time — and, with a resolution deleted in one folder
    /// only, aborts ("must run --resync"). So a resolution does not travel from one folder to the
    /// other here: each folder resolves its own conflict, and a `--resync` run then takes the two
    /// folders, now alike, as its new listings. After that, runs are quiet.
    @Test("documents open in both folders: both get the newer text and .inConflict; resolved in each folder, the folders stay in step after a --resync run")
    func conflictWithDocumentsOpenInBothFolders() async throws {
        try await withDocInBothFolders { bisync, url1, url2 in
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

            // Each folder resolves its conflict: its copy goes, its document leaves .inConflict.
            for (folder, url, document) in [(one, url1, document1), (two, url2, document2)] {
                let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first)
                try version.resolve()
                #expect(conflictCopies(of: "doc.txt", in: folder).isEmpty)
                try await Polling.until("the document in \(folder.lastPathComponent) out of conflict") {
                    !document.documentState.contains(.inConflict)
                }
                #expect(listing(folder) == ["doc.txt", RcloneBisync.unchangedFolderName])
            }

            // Both folders now hold the same file (the newer copy, moved into place: same bytes,
            // same time). A --resync run takes them as they are and copies nothing; the next run
            // finds nothing to do, and the documents stay as they are.
            let resync = try await bisync.run(resync: true)
            #expect(!resync.contains("New or changed in both paths"))
            let quiet = try await bisync.run()
            #expect(quiet.contains("No changes found"), "\(quiet)")
            for (folder, url, document) in [(one, url1, document1), (two, url2, document2)] {
                #expect(listing(folder) == ["doc.txt", RcloneBisync.unchangedFolderName])
                #expect(text(at: folder.appendingPathComponent("doc.txt")) == "edit on path2")
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: url).isEmpty)
                #expect(document.text == "edit on path2" && document.documentState == .normal)
            }

            try await document1.closeThrowing()
            try await document2.closeThrowing()
        }
    }

    /// After a conflicting run: `newerText` has the real name back in `folder` — promoted live, or
    /// at the latest by a query of the versions, which promotes it if the change monitor has not
    /// yet — and the open `document` stays the document of that name, gains `.inConflict` and
    /// shows `newerText`.
    private func expectPromotion(in folder: URL, of newerText: String, document: NoteDocument,
                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let url = folder.appendingPathComponent("doc.txt")
        _ = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
        #expect(text(at: url) == newerText, sourceLocation: sourceLocation)
        try await Polling.until("the document in \(folder.lastPathComponent) in conflict") {
            document.documentState.contains(.inConflict)
        }
        #expect(document.fileURL.standardizedFileURL.path == url.standardizedFileURL.path, sourceLocation: sourceLocation)
        #expect(!document.documentState.contains(.closed), sourceLocation: sourceLocation)
        try await Polling.until("the document in \(folder.lastPathComponent) to show the newer text") {
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
    /// holding `doc.txt` ("base") after a first run.
    func withDocInBothFolders(_ body: (_ bisync: RcloneBisync, _ url1: URL, _ url2: URL) async throws -> Void) async throws {
        _ = try RequiredTool.rclone.require()
        try await withPrivateVersionStore {
            try await RcloneBisync.with { bisync in
                let url1 = bisync.folder(.path1).appendingPathComponent("doc.txt")
                let url2 = bisync.folder(.path2).appendingPathComponent("doc.txt")
                try put("base", at: url1)
                try await bisync.run()
                try await body(bisync, url1, url2)
            }
        }
    }
}
