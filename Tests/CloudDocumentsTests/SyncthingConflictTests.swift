import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

// Real Syncthing: two linked instances on 127.0.0.1 (SyncthingPair, Tests/TestSupport), a conflict
// made the way users make one — the link down, both sides edit, the link back — and documents
// open on both sides. Serialized: each test runs a pair of its own, and two pairs starting at
// once on a 2-core machine only slow each other down.

@Suite("Real Syncthing: conflict copies become conflict versions", .serialized, .timeLimit(.minutes(2 * Polling.deadlineScale)),
       .enabled(if: RequiredTool.syncthing.isInstalledOrRequired, Comment(rawValue: RequiredTool.syncthing.missingMessage)))
struct SyncthingConflictTests {
    @Test("the pair syncs, and a real conflict leaves a copy named as SyncConflictNaming expects on both sides")
    func realConflictCopyIsRecognised() async throws {
        _ = try RequiredTool.syncthing.require()
        try await SyncthingPair.with { pair in
            let a = pair.folder(.a), b = pair.folder(.b)
            try put("base", at: a.appendingPathComponent("doc.txt"))
            try pair.rescan(.a)
            try await Polling.until("doc.txt on B") { text(at: b.appendingPathComponent("doc.txt")) == "base" }
            try await pair.waitUntilInSync()

            try await pair.pauseLink()
            try put("edit from A", at: a.appendingPathComponent("doc.txt"))
            try await FileClock.waitUntilAfterModification(of: a.appendingPathComponent("doc.txt"))
            try put("edit from B", at: b.appendingPathComponent("doc.txt"))   // newer mtime: B wins
            try pair.rescan(.a)
            try pair.rescan(.b)
            try await pair.resumeLink()
            try await Polling.until("a conflict copy on both sides") {
                conflictCopies(of: "doc.txt", in: a).count == 1 && conflictCopies(of: "doc.txt", in: b).count == 1
                    && text(at: a.appendingPathComponent("doc.txt")) == "edit from B"
            }

            for folder in [a, b] {
                let copy = try #require(conflictCopies(of: "doc.txt", in: folder).first)
                #expect(copy.scheme == .syncthing)
                // The device ID in the name is the winner's (B, whose edit is newer), not the copy's author.
                #expect(copy.party == pair.shortDeviceID(.b))
                #expect(copy.partyRole == .madeTheCurrentVersion)
                #expect(copy.savingComputer == nil)
                #expect(copy.timestamp != nil)
                #expect(text(at: folder.appendingPathComponent(copy.name)) == "edit from A")
                #expect(text(at: folder.appendingPathComponent("doc.txt")) == "edit from B")
                // Nothing else appeared (no temporary file left behind).
                #expect(listing(folder) == [".stfolder", copy.name, "doc.txt"].sorted())
            }
        }
    }

    @Test("documents open on both sides: .inConflict on both, the loser's text as version, resolved on A, cleared on B")
    func conflictWithDocumentsOpenOnBothSides() async throws {
        try await withDocOnBothSides { pair, urlA, urlB in
            let a = pair.folder(.a), b = pair.folder(.b)
            let documentA = NoteDocument(fileURL: urlA), documentB = NoteDocument(fileURL: urlB)
            try await documentA.openThrowing()
            try await documentB.openThrowing()

            try await pair.pauseLink()
            documentA.edit("edit from A")
            try await documentA.saveThrowing(to: urlA, for: .forOverwriting)
            try await FileClock.waitUntilAfterModification(of: urlA)
            documentB.edit("edit from B")                                   // newer mtime: B wins
            try await documentB.saveThrowing(to: urlB, for: .forOverwriting)
            try pair.rescan(.a)
            try pair.rescan(.b)
            #expect(documentA.documentState == .normal && documentB.documentState == .normal)

            try await pair.resumeLink()
            // B (the winner) gets the copy as a new file; A (the loser) has its file renamed to
            // the copy and B's version put in its place.
            try await Polling.until("the conflict copy on B") { conflictCopies(of: "doc.txt", in: b).count == 1 }
            try await Polling.until("B's document in conflict") {
                documentB.documentState.contains(.inConflict)
            }
            try await Polling.until("the conflict copy and B's text on A") {
                conflictCopies(of: "doc.txt", in: a).count == 1 && text(at: urlA) == "edit from B"
            }
            try await Polling.until("A's document in conflict") {
                documentA.documentState.contains(.inConflict)
            }

            // A's document stays the document of doc.txt (its old file became the copy) and,
            // having no unsaved changes, shows the winning text.
            #expect(documentA.fileURL.standardizedFileURL.path == urlA.standardizedFileURL.path)
            #expect(!documentA.documentState.contains(.closed))
            try await Polling.until("A's document to reload B's text") { documentA.text == "edit from B" }
            #expect(documentB.text == "edit from B")

            // The versions: on both sides, the copy, holding the loser's (A's) text. Syncthing's
            // name carries the winner's device, so no saving computer.
            for (folder, url) in [(a, urlA), (b, urlB)] {
                let copy = try #require(conflictCopies(of: "doc.txt", in: folder).first)
                let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
                #expect(versions.count == 1)
                let version = try #require(versions.first)
                #expect(version.url.lastPathComponent == copy.name)
                #expect(version.isConflict && !version.isResolved)
                #expect(version.localizedNameOfSavingComputer == nil)
                #expect(text(at: version.url) == "edit from A")
            }

            // Resolve on A: the copy is deleted there (coordinated) and A leaves .inConflict;
            // Syncthing carries the deletion to B, whose document leaves .inConflict too.
            let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: urlA).first)
            try version.resolve()
            #expect(conflictCopies(of: "doc.txt", in: a).isEmpty)
            try await Polling.until("A's document out of conflict") {
                !documentA.documentState.contains(.inConflict)
            }
            try pair.rescan(.a)
            try await Polling.until("the copy gone on B") { conflictCopies(of: "doc.txt", in: b).isEmpty }
            try await Polling.until("B's document out of conflict") {
                !documentB.documentState.contains(.inConflict)
            }
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: urlB).isEmpty)
            #expect(text(at: urlA) == "edit from B" && text(at: urlB) == "edit from B")

            try await documentA.closeThrowing()
            try await documentB.closeThrowing()
        }
    }

    @Test("Syncthing replaces a file changed on the other side by delete + rename: the open document stays open and reloads")
    func deleteThenRenameReplacementKeepsDocumentOpen() async throws {
        try await withDocOnBothSides { pair, urlA, urlB in
            let a = pair.folder(.a)
            let receiving = PlainNote(fileURL: urlA)
            try await receiving.openThrowing()
            let recorder = StateRecorder(receiving)
            let editing = NoteDocument(fileURL: urlB)
            try await editing.openThrowing()

            for round in 1...3 {
                editing.edit("edit \(round) from B")
                try await editing.saveThrowing(to: urlB, for: .forOverwriting)
                try pair.rescan(.b)
                // Syncthing on A: writes .syncthing.doc.txt.tmp, deletes doc.txt, renames the
                // temporary file to doc.txt.
                try await Polling.until("round \(round) on A") { text(at: urlA) == "edit \(round) from B" }
                try await Polling.until("A's document to reload round \(round)") {
                    await receiving.text == "edit \(round) from B"
                }
            }
            // The reload sets the text, then ends `.editingDisabled` in a later main-actor turn.
            try await Polling.until("A's document to settle") { receiving.documentState == .normal }
            #expect(receiving.fileURL.standardizedFileURL.path == urlA.standardizedFileURL.path)
            #expect(!recorder.recorded.contains { $0.contains(.closed) })
            let calls = receiving.presenterCalls.withLock { $0 }
            #expect(!calls.contains("deletion"), "the moment without doc.txt is not a deletion: \(calls)")
            #expect(!calls.contains("didMove"), "nor a move: \(calls)")
            #expect(isRegistered(receiving))
            #expect(listing(a) == [".stfolder", "doc.txt"])

            try await receiving.closeThrowing()
            try await editing.closeThrowing()
        }
    }
}

extension SyncthingConflictTests {
    /// Runs `body` with a private version store and a new pair whose folder holds `doc.txt`
    /// ("base") on both sides, in sync.
    func withDocOnBothSides(_ body: (_ pair: SyncthingPair, _ urlA: URL, _ urlB: URL) async throws -> Void) async throws {
        _ = try RequiredTool.syncthing.require()
        try await withPrivateVersionStore {
            try await SyncthingPair.with { pair in
                let urlA = pair.folder(.a).appendingPathComponent("doc.txt")
                let urlB = pair.folder(.b).appendingPathComponent("doc.txt")
                try put("base", at: urlA)
                try pair.rescan(.a)
                try await Polling.until("doc.txt on B") { text(at: urlB) == "base" }
                try await pair.waitUntilInSync()
                try await body(pair, urlA, urlB)
            }
        }
    }
}
