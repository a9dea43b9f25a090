import FileCoordination
import Foundation
import TestSupport
import Testing
@testable import CloudDocuments

@Suite("Restoring a version of an open document", .timeLimit(.minutes(1 * Polling.deadlineScale)))
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

@Suite("Version changes made on the main actor while a document of the item is open", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct MainActorVersionChangeTests {
    /// As an app does it in its `.inConflict` handler: the document gives way to the
    /// resolution's coordinated write without waiting for the main actor (which is blocked in it).
    @Test("resolve(), remove() and removeOtherVersionsOfItem on the main actor do not deadlock")
    func resolvingOnTheMainActor() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "original") { _, url, document in
                document.edit("mine")
                try put("theirs", at: url)
                try await document.saveThrowing(to: url, for: .forOverwriting)
                let conflict = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first)

                try conflict.resolve()                       // synchronous, on the main actor
                try FileVersion.removeOtherVersionsOfItem(at: url)
                #expect(try FileVersion.otherVersionsOfItem(at: url).isEmpty)

                await drainDocumentQueue(document)
                #expect(document.documentState == .normal)
                #expect(document.text == "mine")
                try await document.closeThrowing()
            }
        }
    }
}
