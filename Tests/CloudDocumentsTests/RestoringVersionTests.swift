import FileCoordination
import Foundation
import TestSupport
import Testing
@testable import CloudDocuments

@Suite("Restoring a version of an open document", .timeLimit(.minutes(1)))
struct RestoringVersionTests {
    @Test("replaceItem(at:) on an open document's file: the document stays open and reloads the restored text")
    func restoreKeepsDocumentOpen() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "first") { _, url, document in
                let kept = try FileVersion.addOfItem(at: url, withContentsOf: url)
                var stream = StateStream(document)
                try await coordinatedPut("second", at: url)
                _ = await stream.until { $0 == .normal }
                #expect(document.text == "second")

                // A restore replaces the contents: the document is told of a change, not asked
                // to accommodate a deletion (which would close it).
                try await onBackgroundThread { _ = try kept.replaceItem(at: url) }
                let states = await stream.until { $0 == .normal }
                #expect(!states.contains(.closed))
                await drainDocumentQueue(document)
                #expect(document.documentState == .normal)
                #expect(document.text == "first")
                #expect(text(at: url) == "first")
                try await document.closeThrowing()
            }
        }
    }
}
