import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

/// A save checks what it is about to overwrite (conflict versions, merges). When nothing was at
/// the target at that check, the write creates the file and never replaces one that appeared since:
/// in the soak of issue 15 a document whose folder was moved back into place around its save (the
/// move took no lock of the path the document was saving to) overwrote lines appended meanwhile.
/// The file that appeared is then checked like any other — kept as a conflict version here — and
/// the save goes on (the next soak reported each such save as a failed `alreadyExists`).
@Suite("A save never overwrites a file that appeared after its check", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct SaveOntoAppearedFileTests {
    @Test func aFileThatAppearsBetweenTheCheckAndTheWriteIsCheckedThenSaved() async throws {
        try await withOpenNote(AppearingFileNote.init) { _, url, document in
            try FileManager.default.removeItem(at: url)  // gone, without coordinating (rm)
            document.edit("v1 + mine")
            document.appearing.withLock { $0 = ["theirs, moved into place"] }

            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(text(at: url) == "v1 + mine")
            #expect(try conflictTexts(of: url) == ["theirs, moved into place"], "the file that appeared was overwritten unseen")
            #expect(!document.hasUnsavedChanges)
            #expect(document.documentState.contains(.inConflict))
        }
    }

    @Test func aFileThatAppearsTwiceFailsTheSaveAndIsKept() async throws {
        try await withOpenNote(AppearingFileNote.init) { _, url, document in
            try FileManager.default.removeItem(at: url)
            document.edit("v1 + mine")
            // Appears, and after the second check it is gone and appears again.
            document.appearing.withLock { $0 = ["theirs", "theirs again"] }
            document.removeBeforeSecondCheck.withLock { $0 = true }

            await #expect(throws: DocumentError.self) {
                try await document.saveThrowing(to: url, for: .forOverwriting)
            }
            #expect(text(at: url) == "theirs again", "the file that appeared was overwritten unseen")
            #expect(document.hasUnsavedChanges)
        }
    }
}

/// A note whose write steps first put the next of `appearing` (if any) at the target: as if
/// another program moved a file there right after the save's check. With
/// `removeBeforeSecondCheck`, the file is removed again when the first write fails, so the second
/// check finds nothing again.
final class AppearingFileNote: EditableNote {
    nonisolated let appearing = Locked<[String]>([])
    nonisolated let removeBeforeSecondCheck = Locked(false)

    nonisolated override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                            safelyTo url: URL, for saveOperation: SaveOperation) throws {
        if let theirs = appearing.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            try Data(theirs.utf8).write(to: url)
        }
        do {
            try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
        } catch {
            if removeBeforeSecondCheck.withLock({ value in defer { value = false }; return value }) {
                try? FileManager.default.removeItem(at: url)
            }
            throw error
        }
    }
}
