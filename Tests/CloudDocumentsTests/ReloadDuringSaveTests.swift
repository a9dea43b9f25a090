import FileCoordination
import Foundation
import Synchronization
import Testing
@testable import CloudDocuments

/// A document's coordinators share one lock owner, so its reads never wait for its own writes.
/// A reload (revert) must still never land inside one of its saves: in the 10-minute soak of
/// issue 15, a reload between a save's snapshot check and its merge made the merge take the
/// reloaded text for the common ancestor, and the lines another program had appended were
/// dropped without a conflict version (about one in 3,000).
@Suite("A reload never lands inside a save of the same document", .timeLimit(.minutes(1)))
@MainActor
struct ReloadDuringSaveTests {
    @Test func aRevertStartedDuringAPresenterSaveLoadsOnlyAfterIt() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("v1", at: url)
            let document = HoldingNote(fileURL: url)
            try await document.openThrowing()
            _ = document.loadStarted.wait(timeout: .now())  // the open's load
            document.edit("v1 + mine")

            // A save asked for by another coordinator (it runs off the document's queue).
            let saved = DispatchSemaphore(value: 0)
            document.savePresentedItemChanges { _ in saved.signal() }
            try await onBackgroundThread { _ = document.writing.wait(timeout: .now() + 30) }
            // The save is writing (inside its coordinated write): revert now.
            let reverted = Task { @MainActor in try await document.revertThrowing(toContentsOf: url) }
            try await onBackgroundThread { _ = saved.wait(timeout: .now() + 30) }
            try await reverted.value

            #expect(document.loadsDuringSave.load(ordering: .relaxed) == 0,
                    "the reload ran while the save was writing")
            #expect(document.text == "v1 + mine")
            try await document.closeThrowing()
        }
    }
}

/// A note whose write step says it started and then gives a reload a chance to run (it waits,
/// at most 2 s, for one to start loading): with the fix, the reload waits for the save instead,
/// and the wait simply runs out.
final class HoldingNote: EditableNote {
    nonisolated let writing = DispatchSemaphore(value: 0)
    nonisolated let loadStarted = DispatchSemaphore(value: 0)
    nonisolated let insideSave = Atomic<Bool>(false)
    nonisolated let loadsDuringSave = Atomic<Int>(0)

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        if insideSave.load(ordering: .relaxed) { loadsDuringSave.add(1, ordering: .relaxed) }
        try super.load(fromContents: contents, ofType: typeName)
        loadStarted.signal()
    }

    nonisolated override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                            safelyTo url: URL, for saveOperation: SaveOperation) throws {
        insideSave.store(true, ordering: .relaxed)
        defer { insideSave.store(false, ordering: .relaxed) }
        writing.signal()
        // A bound, not a synchronisation: the reload that should *not* get in is given time to.
        _ = loadStarted.wait(timeout: .now() + 2)
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
    }
}
