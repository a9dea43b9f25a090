import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

/// Documents written the way Apple developers write them: plain-property subclasses on the main
/// actor, `async -> Bool` forms, optional completion handlers, and the rest of UIDocument's API.
@Suite("CloudDocument with UIDocument's shapes: main-actor subclasses and the rest of the API", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct AppleShapedAPITests {
    @Test("a plain-property subclass saves, opens and closes with the async -> Bool forms; hooks on the main actor")
    func plainSubclass() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("plain.txt")
            let note = PlainNote(fileURL: url)
            note.text = "hello"
            #expect(await note.save(to: url, for: .forCreating))
            #expect(text(at: url) == "hello")
            #expect(note.documentState == .normal)
            #expect(await note.close())

            let again = PlainNote(fileURL: url)
            let ok = await again.open()
            #expect(ok)
            #expect(again.text == "hello")
            #expect(again.loads == 1)
            again.text = "edited"
            again.updateChangeCount(.done)
            #expect(await again.close(), "close saves the change")
            #expect(text(at: url) == "edited")

            let mainActorNote = MainActorNote(fileURL: url)
            #expect(await mainActorNote.open())
            #expect(mainActorNote.text == "edited")
            #expect(await mainActorNote.close())
        }
    }

    @Test("async -> Bool reports failure, the throwing form gives the error")
    func boolAndThrowingForms() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("missing.txt")
            let note = PlainNote(fileURL: url)
            #expect(await note.open() == false)
            expectCase("fileNotFound", of: note.lastError)
            do {
                try await note.openThrowing()
                Issue.record("openThrowing succeeded on a missing file")
            } catch {
                expectCase("fileNotFound", of: error)
            }
            #expect(note.documentState == .closed)
            #expect(await note.revert(toContentsOf: url) == false, "reverting a closed document fails")
            do {
                try await note.revertThrowing(toContentsOf: url)
                Issue.record("revertThrowing succeeded on a closed document")
            } catch {
                expectCase("documentClosed", of: error)
            }
        }
    }

    @Test("changeCountToken and updateChangeCount(withToken:for:) mark exactly that version saved")
    func changeCountTokens() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("tokens.txt")
            try put("v1", at: url)
            let note = PlainNote(fileURL: url)
            #expect(await note.open())
            note.text = "v2"
            note.updateChangeCount(.done)
            let token = note.changeCountToken(for: .forOverwriting)
            #expect(note.hasUnsavedChanges)
            note.updateChangeCount(withToken: token, for: .forOverwriting)
            #expect(!note.hasUnsavedChanges, "the current version is the one the token was taken of")

            note.text = "v3"
            note.updateChangeCount(.done)
            note.updateChangeCount(withToken: token, for: .forOverwriting)
            #expect(note.hasUnsavedChanges, "a change made after the token stays unsaved")
            note.updateChangeCount(.undone)
            #expect(!note.hasUnsavedChanges, "undoing back to the token's version is clean")
            #expect(await note.close())
        }
    }

    @Test("read(from:) is the overridable read step (off the main actor) that ends in load")
    func readStep() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("steps.txt")
            try put("quiet", at: url)
            let note = StepsNote(fileURL: url)
            try await note.openThrowing()
            #expect(note.text == "QUIET")
            #expect(note.documentState == .normal)
            try put("again", at: url)
            try await note.revertThrowing(toContentsOf: url)
            #expect(note.text == "AGAIN")
            #expect(!note.hasUnsavedChanges)
            try await note.closeThrowing()
        }
    }

    @Test("writeContents(_:andAttributes:safelyTo:for:) is the overridable write step; fileAttributesToWrite applies")
    func writeStepAndAttributes() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("written.txt")
            let steps = StepsNote(fileURL: url)
            steps.text = "one"
            try await steps.saveThrowing(to: url, for: .forCreating)
            steps.text = "two"
            try await steps.saveThrowing(to: url, for: .forOverwriting)
            #expect(steps.safeWrites.withLock { $0 } == 2)
            #expect(text(at: url) == "two")
            try await steps.closeThrowing()

            let plain = PlainNote(fileURL: url)
            try await plain.openThrowing()
            plain.attributes = [.posixPermissions: 0o640]
            plain.text = "three"
            try await plain.saveThrowing(to: url, for: .forOverwriting)
            let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
            #expect(mode == 0o640)
            #expect(text(at: url) == "three")

            // The in-place step, called directly.
            let other = folder.appendingPathComponent("in-place.txt")
            try plain.writeContents(.data(Data("direct".utf8)), to: other, for: .forCreating, originalContentsURL: nil)
            #expect(text(at: other) == "direct")
            try await plain.closeThrowing()
        }
    }

    @Test("performAsynchronousFileAccess runs in order with the lifecycle operations, off the main actor")
    func fileAccessQueue() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("queue.txt")
            try put("before", at: url)
            let note = PlainNote(fileURL: url)
            try await note.openThrowing()
            note.text = "after"
            note.updateChangeCount(.done)
            note.save(to: url, for: .forOverwriting, completionHandler: nil)
            let seen = await withCheckedContinuation { continuation in
                note.performAsynchronousFileAccess {
                    dispatchPrecondition(condition: .notOnQueue(.main))
                    continuation.resume(returning: text(at: url))
                }
            }
            #expect(seen == "after", "the save queued before it had finished")
            #expect(!note.hasUnsavedChanges)
            note.close(completionHandler: nil)
            #expect(await note.close())
            #expect(note.documentState == .closed)
        }
    }

    @Test("an error left for the user gets userInteractionNoLongerPermitted when the document closes")
    func userInteractionNoLongerPermitted() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("errors.txt")
            try put("x", at: url)
            let note = PlainNote(fileURL: url)
            try await note.openThrowing()
            note.keepsErrorsForTheUser = true
            let nowhere = folder.appendingPathComponent("no-such-folder/errors.txt")
            #expect(await note.save(to: nowhere, for: .forCreating) == false)
            #expect(note.finishedErrors.isEmpty, "the error is still being handled with the user")
            #expect(note.errorsNoLongerInteractive == 0)
            #expect(await note.close())
            #expect(note.errorsNoLongerInteractive == 1)
            #expect(note.finishedErrors == [false], "the default finishes it, not recovered")

            // Once finished, closing again reports nothing more.
            #expect(await note.open())
            #expect(await note.close())
            #expect(note.errorsNoLongerInteractive == 1)
        }
    }

    @Test("a presenter override that calls super keeps the document working (reload after another writer)")
    func presenterOverrideCallsSuper() async throws {
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("presenter.txt")
            try put("mine", at: url)
            let note = PlainNote(fileURL: url)
            try await note.openThrowing()
            var stream = StateStream(note)
            try await coordinatedPut("theirs", at: url)
            #expect(await stream.next(2) == [.editingDisabled, .normal])
            #expect(note.text == "theirs")
            #expect(note.changeMessages.withLock { $0 } >= 1)
            #expect(note.loads == 2)
            try await note.closeThrowing()
        }
    }

    @Test("overrides of presentedItemDidMove(to:) and accommodatePresentedItemDeletion that call super: the document follows and closes")
    func moveAndDeletionOverridesCallSuper() async throws {
        try await Scratch.with { folder in
            let source = folder.appendingPathComponent("before.txt")
            let destination = folder.appendingPathComponent("after.txt")
            try put("moving", at: source)
            let note = PlainNote(fileURL: source)
            try await note.openThrowing()
            try await coordinatedMove(source, to: destination)
            await drainDocumentQueue(note)
            #expect(note.presenterCalls.withLock { $0.contains("didMove") })
            #expect(note.fileURL == destination)

            var stream = StateStream(note)
            try await onBackgroundThread {
                try Coordinator().coordinate(writingItemAt: destination, options: .forDeleting) { url in
                    try FileManager.default.removeItem(at: url)
                }
            }
            #expect(await stream.next(2) == [.editingDisabled, .closed])
            #expect(note.presenterCalls.withLock { $0.contains("deletion") })
            #expect(note.documentState == .closed)
            #expect(!isRegistered(note))
        }
    }
}
