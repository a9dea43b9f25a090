import Foundation
import Testing
@testable import CloudDocuments

@Test func scratchTiming() async throws {
    try await withDocumentFolder { folder in
        let url = folder.appendingPathComponent("note.txt")
        try put("old", at: url)
        let document = NoteDocument(fileURL: url)
        try await document.open()
        document.edit("new, unsaved")
        let clock = ContinuousClock()
        let t0 = clock.now
        document.saveObserver = { _ in print("saved at", clock.now - t0) }
        let seen = try await onBackgroundThread {
            try Coordinator().coordinate(readingItemAt: url) { url in print("reader runs at", clock.now - t0); return text(at: url) }
        }
        print("read done at", clock.now - t0, seen ?? "")
        let again = try await onBackgroundThread {
            try Coordinator().coordinate(readingItemAt: url) { url in text(at: url) }
        }
        print("second read at", clock.now - t0, again ?? "")
        try await document.close()
        print("closed at", clock.now - t0)
    }
}
