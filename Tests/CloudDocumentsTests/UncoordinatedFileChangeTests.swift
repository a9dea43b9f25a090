import FileCoordination
import Foundation
import TestSupport
import Testing
@testable import CloudDocuments

/// An open document whose file is renamed, deleted or replaced by a program that does not
/// coordinate (`/bin/mv`, `/bin/rm`, a child process doing what Syncthing does).
@Suite("CloudDocument and programs that do not coordinate", .serialized, .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct UncoordinatedFileChangeTests {
    @Test("rm of the file of a clean document: it closes ([closed]) and is unregistered")
    func removalClosesCleanDocument() async throws {
        try await Scratch.with { folder in
            let url = try makeFile("clean.txt", containing: "saved", in: folder)
            let document = WatchedNote(fileURL: url)
            try await document.openThrowing()
            var stream = StateStream(document)
            try run("/bin/rm", url.path)
            #expect(await stream.next(1) == [.closed])
            #expect(document.documentState == .closed)
            #expect(!isRegistered(document))
            #expect(document.events.withLock { $0 } == ["deletion answered"])
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test("rm of the file of a document with unsaved changes: it stays open with them; the next save writes the file again")
    func removalKeepsUnsavedChanges() async throws {
        try await Scratch.with { folder in
            let url = try makeFile("dirty.txt", containing: "saved", in: folder)
            let document = WatchedNote(fileURL: url)
            try await document.openThrowing()
            document.edit("unsaved edit")
            let recorder = StateRecorder(document)
            try run("/bin/rm", url.path)
            await document.waitFor("deletion answered")
            await drainDocumentQueue(document)
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [])
            #expect(document.hasUnsavedChanges)
            #expect(document.text == "unsaved edit")
            #expect(isRegistered(document))
            #expect(document.fileURL == url)
            #expect(!FileManager.default.fileExists(atPath: url.path))

            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            #expect(text(at: url) == "unsaved edit")
            #expect(!document.hasUnsavedChanges)
            #expect(document.documentState == .normal)
            try await document.closeThrowing()
        }
    }

    @Test("mv of the file (another process): fileURL follows, the next save goes to the new place")
    func renameFollowed() async throws {
        try await Scratch.with { folder in
            let old = try makeFile("draft.txt", containing: "text", in: folder)
            let new = folder.appendingPathComponent("final.txt")
            let document = WatchedNote(fileURL: old)
            try await document.openThrowing()
            try run("/bin/mv", old.path, new.path)
            await document.waitFor("didMove final.txt")
            #expect(document.fileURL.path == new.path)
            #expect(document.localizedName == "final")
            document.edit("edited after mv")
            try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
            #expect(text(at: new) == "edited after mv")
            #expect(!FileManager.default.fileExists(atPath: old.path))
            #expect(document.documentState == .normal)
            try await document.closeThrowing()
        }
    }

    @Test("Syncthing's delete-then-rename replacement (by a child process): the document reloads and stays open")
    func replacementReloads() async throws {
        try await Scratch.with { folder in
            let url = try makeFile("doc.txt", containing: "base", in: folder)
            let document = WatchedNote(fileURL: url)
            try await document.openThrowing()
            let recorder = StateRecorder(document)
            var stream = StateStream(document)
            for round in 1...3 {
                let child = try ChildProcess(["syncthing-replace", url.path, "version \(round)"])
                #expect(child.expect("REPLACED") == "REPLACED")
                child.waitForExit()
                // The reload is the sync point: its states are announced once it is done.
                #expect(await stream.until { $0 == .normal } == [.editingDisabled, .normal])
                #expect(document.text == "version \(round)")
            }
            // Every check of the moments without doc.txt is over: nothing more can come.
            try await Polling.until("the change monitor's deletion checks") { !CoordinationRuntime.process.isCheckingDeletions }
            await drainDocumentQueue(document)
            #expect(!document.events.withLock { $0 }.contains("deletion answered"))
            #expect(!recorder.recorded.contains { $0.contains(.closed) })
            #expect(isRegistered(document))
            #expect(document.fileURL == url)
            try await document.closeThrowing()
        }
    }
}

/// A text document that records the presenter messages about moves and deletions.
final class WatchedNote: CloudDocument {
    private let body = Locked("")
    /// "didMove NAME", "deletion answered", in order (recorded on the presenter queue, or where
    /// the document answers the deletion).
    let events = Locked<[String]>([])
    private let waiters = Locked<[(String, CheckedContinuation<Void, Never>)]>([])

    nonisolated var text: String { body.withLock { $0 } }

    nonisolated func edit(_ newText: String) {
        body.withLock { $0 = newText }
        updateChangeCount(.done)
    }

    override func contents(forType typeName: String) throws -> DocumentContents { .data(Data(text.utf8)) }

    override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
        body.withLock { $0 = String(decoding: contents.data ?? Data(), as: UTF8.self) }
    }

    override func presentedItemDidMove(to newURL: URL) {
        super.presentedItemDidMove(to: newURL)
        record("didMove \(newURL.lastPathComponent)")
    }

    override func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        super.accommodatePresentedItemDeletion { [self] error in
            record("deletion answered")
            completionHandler(error)
        }
    }

    nonisolated private func record(_ event: String) {
        let ready = events.withLock { events -> [CheckedContinuation<Void, Never>] in
            events.append(event)
            return waiters.withLock { waiters in
                let matching = waiters.filter { $0.0 == event }.map(\.1)
                waiters.removeAll { $0.0 == event }
                return matching
            }
        }
        ready.forEach { $0.resume() }
    }

    /// Returns once `event` has been recorded (at once if it was already).
    nonisolated func waitFor(_ event: String) async {
        await withCheckedContinuation { continuation in
            let done = events.withLock { events in
                if events.contains(event) { return true }
                waiters.withLock { $0.append((event, continuation)) }
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// Runs `executable` with `arguments` as a process of its own and waits for it to succeed.
private func run(_ executable: String, _ arguments: String...) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "\(executable) \(arguments)")
}
