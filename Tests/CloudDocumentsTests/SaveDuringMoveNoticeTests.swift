import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

/// A save over the document's own file checks what it overwrites, even when a move notice changes
/// the document's `fileURL` while the save is under way. In the soak of issue 15, a notice for a
/// folder move already undone arrived between the save's start and its check: the check took the
/// target for another file, skipped itself, and the save overwrote lines appended meanwhile.
@Suite("A move notice during a save does not turn its check off", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct SaveDuringMoveNoticeTests {
    @Test func theFileChangedBeforeTheSaveIsKeptAsAConflictVersion() async throws {
        try await withOpenNote(MoveNoticeNote.init) { folder, url, document in
            try put("v1 + theirs", at: url)  // another program's change, not yet seen
            document.edit("v1 + mine")
            // The notice arrives while the save takes its snapshot (after the save started).
            document.noticeDuringSnapshot.withLock { $0 = folder.appendingPathComponent("elsewhere/note.txt") }
            try await document.saveThrowing(to: url, for: .forOverwriting)

            #expect(text(at: url) == "v1 + mine")
            #expect(try conflictTexts(of: url) == ["v1 + theirs"], "the other program's change was overwritten unseen")
        }
    }

    /// The soak's case: the save is asked for the old place after the notice of a move (so the
    /// document's `fileURL` is the new place when the save starts and when it checks), and the
    /// move was undone before its notice arrived, so the coordinator finds the file at the old
    /// place. None of the requested, started-for and current URLs is the target: the check used
    /// to take it for another file and skip itself.
    @Test func aSaveAskedForAPlaceTheFileHadIsChecked() async throws {
        try await withOpenNote(MoveNoticeNote.init) { folder, url, document in
            // The notice of a folder move whose undoing has not been announced yet.
            document.presentedItemDidMove(to: folder.appendingPathComponent("moved/note.txt"))
            try put("v1 + theirs", at: url)  // another program's change, not yet seen
            document.edit("v1 + mine")
            try await document.saveThrowing(to: url, for: .forOverwriting)

            #expect(text(at: url) == "v1 + mine")
            #expect(try conflictTexts(of: url) == ["v1 + theirs"], "the other program's change was overwritten unseen")
        }
    }

    /// A save as, to a place the file never had, is not a save over the document's own file:
    /// whatever is there is replaced without a conflict version, as before.
    @Test func aSaveAsElsewhereIsNotChecked() async throws {
        try await withOpenNote(MoveNoticeNote.init) { folder, _, document in
            let other = folder.appendingPathComponent("other.txt")
            try put("someone else's file", at: other)
            document.edit("v1 + mine")
            try await document.saveThrowing(to: other, for: .forOverwriting)

            #expect(text(at: other) == "v1 + mine")
            #expect(try conflictTexts(of: other).isEmpty)
            #expect(document.fileURL == other)
        }
    }
}

/// A note that, once, receives `presentedItemDidMove(to:)` while its contents are snapshotted.
final class MoveNoticeNote: EditableNote {
    nonisolated let noticeDuringSnapshot = Locked<URL?>(nil)

    override func contents(forType typeName: String) throws -> DocumentContents {
        if let moved = noticeDuringSnapshot.withLock({ value in defer { value = nil }; return value }) {
            presentedItemDidMove(to: moved)
        }
        return try super.contents(forType: typeName)
    }
}

/// A document closed for it (a coordinated delete or replace of the folder it was thought to be
/// in, from a late move notice) and then saved explicitly: the save still checks the file.
@Suite("A closed document's save still checks what it overwrites", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct ClosedDocumentSaveTests {
    @Test func anotherProgramsChangeIsKeptAsAConflictVersion() async throws {
        try await withOpenNote(MoveNoticeNote.init) { _, url, document in
            document.edit("v1 + mine")
            // Asked to step aside for a deletion that did not happen after all: it closes.
            await withCheckedContinuation { continuation in
                document.accommodatePresentedItemDeletion { _ in continuation.resume() }
            }
            #expect(document.documentState.contains(.closed))
            try put("v1 + theirs", at: url)
            try await document.saveThrowing(to: url, for: .forOverwriting)

            #expect(text(at: url) == "v1 + mine")
            #expect(try conflictTexts(of: url) == ["v1 + theirs"], "the other program's change was overwritten unseen")
        }
    }
}
