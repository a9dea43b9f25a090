import FileCoordination
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import CloudDocuments

/// A document's coordinators share one lock owner, so its reads never wait for its own writes.
/// A reload (revert) must still never land inside one of its saves: in the 10-minute soak of
/// issue 15, a reload between a save's snapshot check and its merge made the merge take the
/// reloaded text for the common ancestor, and the lines another program had appended were
/// dropped without a conflict version (about one in 3,000).
///
/// No clock: the save's write step waits for the revert to *start* (its `disableEditing()`, on
/// the main actor, before its coordinated read), then writes. A revert that could get in would
/// load while the write is under way; with the fix it waits for the save and loads afterwards.
/// What is asserted is the order of events, never how long anything took.
@Suite("A reload never lands inside a save of the same document", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct ReloadDuringSaveTests {
    @Test func aRevertStartedDuringAPresenterSaveLoadsOnlyAfterIt() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("note.txt")
            try put("v1", at: url)
            let document = HoldingNote(fileURL: url)
            try await document.openThrowing()
            document.edit("v1 + mine")

            // A save asked for by another coordinator (it runs off the document's queue, so the
            // revert below can start while it writes).
            let saved = DispatchSemaphore(value: 0)
            let saveError = Locked<String?>(nil)
            document.savePresentedItemChanges { error in
                saveError.withLock { $0 = error.map { "\($0)" } }
                document.writing.signal()  // never leave the wait below hanging on a failed save
                saved.signal()
            }
            // Ends when the write step starts, or when the save has ended without one.
            try await onBackgroundThread { document.writing.wait() }
            #expect(saveError.withLock { $0 } == nil, "the save failed: \(saveError.withLock { $0 } ?? "")")
            #expect(document.events.withLock { $0 } == [.writeStarted], "the save never reached its write step")
            // The save is inside its coordinated write, waiting for this revert to start.
            document.watchingForRevert.store(true, ordering: .sequentiallyConsistent)
            let reverted = Task { @MainActor in try await document.revertThrowing(toContentsOf: url) }
            try await onBackgroundThread { saved.wait() }
            try await reverted.value

            #expect(document.events.withLock { $0 } == [.writeStarted, .revertStarted, .writeFinished, .loaded],
                    "the reload ran while the save was writing")
            #expect(document.text == "v1 + mine")
            try await document.closeThrowing()
        }
    }
}

/// A note whose write step says it started, then waits for the revert to start before writing
/// (a wait that cannot cycle: the revert begins on the file-access queue and the main actor,
/// neither of which the presenter save holds), and which records the order of its steps.
final class HoldingNote: EditableNote {
    enum Event: Equatable, Sendable { case writeStarted, revertStarted, writeFinished, loaded }

    nonisolated let writing = DispatchSemaphore(value: 0)
    nonisolated let revertStarted = DispatchSemaphore(value: 0)
    nonisolated let watchingForRevert = Atomic<Bool>(false)
    nonisolated let events = Locked<[Event]>([])

    override func disableEditing() {
        super.disableEditing()
        guard watchingForRevert.load(ordering: .sequentiallyConsistent) else { return }
        events.withLock { $0.append(.revertStarted) }
        revertStarted.signal()
    }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        try super.load(fromContents: contents, ofType: typeName)
        if watchingForRevert.load(ordering: .sequentiallyConsistent) { events.withLock { $0.append(.loaded) } }
    }

    nonisolated override func writeContents(_ contents: DocumentContents, andAttributes attributes: [FileAttributeKey: any Sendable]?,
                                            safelyTo url: URL, for saveOperation: SaveOperation) throws {
        events.withLock { $0.append(.writeStarted) }
        writing.signal()
        revertStarted.wait()
        defer { events.withLock { $0.append(.writeFinished) } }
        try super.writeContents(contents, andAttributes: attributes, safelyTo: url, for: saveOperation)
    }
}
