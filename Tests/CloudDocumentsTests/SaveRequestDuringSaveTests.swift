import FileCoordination
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import CloudDocuments

/// A save request (`savePresentedItemChanges`) that arrives while a save of the document's own
/// file runs on its lifecycle queue waits for that save instead of writing the same version a
/// second time (`RunningOwnSave`), and is then answered as it would have been: nothing left to
/// save, or a save of what changed since the running save's snapshot. Either way the asker reads
/// every change made before it asked.
///
/// No clock: the running save's write step says it started and waits for the test to let it go
/// on; the request is made while it waits. What is asserted is how many writes happened and what
/// the file holds when the request is answered.
@Suite("A save request during a save is answered by that save", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct SaveRequestDuringSaveTests {
    @Test func aRequestDuringASaveOfTheSameVersionWritesNothingMore() async throws {
        try await withOpenNote(GatedNote.init) { _, url, document in
            document.edit("v2")
            let saving = Task { @MainActor in try await document.saveThrowing(to: url, for: .forOverwriting) }
            try await onBackgroundThread { document.writeStarted.wait() }

            let answer = try await askToSave(document, url, during: saving)

            #expect(answer.error == nil)
            #expect(answer.file == "v2", "the asker must find the unsaved edit on disk")
            #expect(document.writes.withLock { $0 } == 1, "the request wrote the same version again")
            #expect(!document.hasUnsavedChanges)
        }
    }

    @Test func aRequestAfterAnEditNewerThanTheRunningSaveStillSavesThatEdit() async throws {
        try await withOpenNote(GatedNote.init) { _, url, document in
            document.edit("v2")
            let saving = Task { @MainActor in try await document.saveThrowing(to: url, for: .forOverwriting) }
            try await onBackgroundThread { document.writeStarted.wait() }
            // The running save writes "v2" (its snapshot); this edit comes after it.
            document.edit("v3")

            let answer = try await askToSave(document, url, during: saving)

            #expect(answer.error == nil)
            #expect(answer.file == "v3", "the edit made before the request must be on disk")
            #expect(document.writes.withLock { $0 } == 2)
            #expect(!document.hasUnsavedChanges)
        }
    }

    /// Sends `savePresentedItemChanges` while `saving` waits at its gate, lets the save go on,
    /// and returns the answer with what the file held when it came.
    private func askToSave(_ document: GatedNote, _ url: URL, during saving: Task<Void, any Error>) async throws -> (error: String?, file: String?) {
        let answered = DispatchSemaphore(value: 0)
        let answer = Locked<(error: String?, file: String?)?>(nil)
        document.savePresentedItemChanges { error in
            answer.withLock { $0 = (error.map { "\($0)" }, try? String(contentsOf: url, encoding: .utf8)) }
            answered.signal()
        }
        document.proceed.signal()
        try await saving.value
        try await onBackgroundThread { answered.wait() }
        return answer.withLock { $0 } ?? (error: "no answer", file: nil)
    }
}

/// A note whose first write says it started and then waits for `proceed` (a wait that cannot
/// cycle: the test signals it from the main actor, which the write does not hold); later writes
/// go straight through. Counts its writes.
final class GatedNote: EditableNote {
    nonisolated let writeStarted = DispatchSemaphore(value: 0)
    nonisolated let proceed = DispatchSemaphore(value: 0)
    nonisolated let writes = Locked(0)

    nonisolated override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                            safelyTo url: URL, for saveOperation: SaveOperation) throws {
        let first = writes.withLock { count -> Bool in
            count += 1
            return count == 1
        }
        if first {
            writeStarted.signal()
            proceed.wait()
        }
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
    }
}
