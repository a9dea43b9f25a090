import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

/// An explicit save asked while the document is open, which a coordinated delete or replace
/// closes before the save gets the file's write lock. In the 10-minute soak of issue 15, a mover
/// declared a folder replace (`.forReplacing` of a place another mover had just filled: the
/// documents inside were asked to accommodate its deletion and closed), then found the place
/// taken and deleted nothing; the document's explicit save, queued just before, failed with
/// "The document is closed. Open the document first." although nobody had closed it.
///
/// No clock: another coordinator holds the file's write lock, so the save (its snapshot already
/// taken, as when nothing else is queued) waits for it; the deletion notice arrives and the
/// document closes; only then is the lock released. The save then goes on as the explicit save of
/// a closed document: it writes, with the usual check of the file found, and the document is open
/// again.
@Suite("An explicit save is not refused because a deletion notice closed the document", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct SaveAfterDeletionCloseTests {
    @Test func theSaveWritesWhenTheDeletionDidNotHappen() async throws {
        try await withOpenNote(EditableNote.init) { _, url, document in
            document.edit("v1 + mine")
            let saved = try await saveWhileClosedByDeletionNotice(document, at: url, deleteMeanwhile: false)

            #expect(saved, "the save failed: \(String(describing: document.lastError))")
            #expect(text(at: url) == "v1 + mine")
            #expect(!document.documentState.contains(.closed), "the saved document is open again")
            #expect(try conflictTexts(of: url).isEmpty, "the file was the one the document knew")
        }
    }

    @Test func theSaveWritesTheFileBackWhenItWasDeleted() async throws {
        try await withOpenNote(EditableNote.init) { _, url, document in
            document.edit("v1 + mine")
            let saved = try await saveWhileClosedByDeletionNotice(document, at: url, deleteMeanwhile: true)

            #expect(saved, "the save failed: \(String(describing: document.lastError))")
            #expect(text(at: url) == "v1 + mine")
            #expect(!document.documentState.contains(.closed))
        }
    }

    /// Autosave and close have nothing left to do once the document was closed under them: no error.
    @Test func anAutosaveOfADocumentClosedMeanwhileIsNoFailure() async throws {
        try await withOpenNote(EditableNote.init) { _, url, document in
            document.edit("v1 + mine")
            let release = DispatchSemaphore(value: 0)
            let held = try await holdWriteLock(of: url, deleting: false, until: release)
            let autosaved = Task { @MainActor in try await document.autosaveThrowing() }
            try await closeForDeletion(document)
            release.signal()
            try await held.value
            #expect(try await autosaved.value == false)
            #expect(document.documentState.contains(.closed))
        }
    }

    /// Starts the save (snapshot taken now), closes the document with a deletion notice while the
    /// save waits for the write lock held by another coordinator, then lets it go on; returns
    /// whether the save succeeded.
    private func saveWhileClosedByDeletionNotice(_ document: EditableNote, at url: URL, deleteMeanwhile: Bool) async throws -> Bool {
        let release = DispatchSemaphore(value: 0)
        let held = try await holdWriteLock(of: url, deleting: deleteMeanwhile, until: release)
        let outcome = Outcome()
        // The completion-handler form takes the snapshot in this call (nothing else is queued).
        document.save(to: url, for: .forOverwriting) { succeeded in outcome.finish(succeeded) }
        try await closeForDeletion(document)
        release.signal()
        try await held.value
        return await outcome.value
    }

    /// Sends the document `accommodatePresentedItemDeletion`, as a coordinated delete or replace
    /// does, and waits until it has closed.
    private func closeForDeletion(_ document: EditableNote) async throws {
        await withCheckedContinuation { continuation in
            document.accommodatePresentedItemDeletion { _ in continuation.resume() }
        }
        #expect(document.documentState.contains(.closed))
    }

    /// Holds a coordinated write of `url` (another coordinator, no presenter) on a thread of its
    /// own until `release` is signalled, then deletes the file when `deleting`. Returns once the
    /// lock is held; the task ends when the write has.
    private func holdWriteLock(of url: URL, deleting: Bool, until release: DispatchSemaphore) async throws -> Task<Void, any Error> {
        let isHeld = DispatchSemaphore(value: 0)
        let task = Task.detached {
            try await onBackgroundThread {
                defer { isHeld.signal() }  // never leave the wait below hanging on a failure
                try Coordinator().coordinate(writingItemAt: url) { target in
                    isHeld.signal()
                    release.wait()
                    // As a coordinated delete does: the presenters were told first.
                    if deleting { try FileManager.default.removeItem(at: target) }
                }
            }
        }
        try await onBackgroundThread { isHeld.wait() }
        return task
    }
}

/// The result of a completion handler, awaited once.
@MainActor
private final class Outcome {
    private var result: Bool?
    private var waiter: CheckedContinuation<Bool, Never>?

    func finish(_ succeeded: Bool) {
        result = succeeded
        waiter?.resume(returning: succeeded)
        waiter = nil
    }

    var value: Bool {
        get async {
            if let result { return result }
            return await withCheckedContinuation { waiter = $0 }
        }
    }
}
