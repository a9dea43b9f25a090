import FileCoordination
import Foundation
import Testing
@testable import CloudDocuments

/// A save checks what it is about to overwrite (conflict versions, merges). When nothing was at
/// the target at that check, the write creates the file and never replaces one that appeared since:
/// in the soak of issue 15 a document whose folder was moved back into place around its save (the
/// move took no lock of the path the document was saving to) overwrote lines appended meanwhile.
@Suite("A save never overwrites a file that appeared after its check", .timeLimit(.minutes(1)))
@MainActor
struct SaveOntoAppearedFileTests {
    @Test func aFileThatAppearsBetweenTheCheckAndTheWriteIsKept() async throws {
        try await withDocumentFolder { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("v1", at: url)
            let document = AppearingFileNote(fileURL: url)
            try await document.openThrowing()
            try FileManager.default.removeItem(at: url)  // gone, without coordinating (rm)
            document.edit("v1 + mine")
            document.appearing.withLock { $0 = "theirs, moved into place" }

            await #expect(throws: DocumentError.self) {
                try await document.saveThrowing(to: url, for: .forOverwriting)
            }
            #expect(text(at: url) == "theirs, moved into place", "the file that appeared was overwritten unseen")
            #expect(document.hasUnsavedChanges)

            try? await document.closeThrowing()
        }
    }
}

/// A note whose write step first puts `appearing` (if set, once) at the target: as if another
/// program moved a file there right after the save's check.
final class AppearingFileNote: EditableNote {
    nonisolated let appearing = Locked<String?>(nil)

    nonisolated override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                            safelyTo url: URL, for saveOperation: SaveOperation) throws {
        if let theirs = appearing.withLock({ value in defer { value = nil }; return value }) {
            try Data(theirs.utf8).write(to: url)
        }
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
    }
}
