import ExampleDocuments
import Foundation
import Ubiquity

/// The first program: owns a text and an image document, and shows what happens to them.
@MainActor
enum Demo {
    static func run() async -> Int32 {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("clouddocs-demo-\(getpid())", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            Narration.say("CloudDocuments demo — documents in \(folder.path)")
            try await runSteps(in: folder)
            Narration.say("\nDone. Every file access above went through a Coordinator; see Docs/Coordination.md.")
            return 0
        } catch {
            Narration.say("\nThe demo failed: \(error.localizedDescription)")
            return 1
        }
    }

    private static func runSteps(in folder: URL) async throws {
        // 1. Two new documents.
        Narration.step(1, "Creating a text document and an image document")
        let notesURL = folder.appendingPathComponent("notes.txt")
        let notes = TextDocument(fileURL: notesURL)
        let observer = observeStates(of: notes)
        defer { NotificationCenter.default.removeObserver(observer) }
        notes.text = "Shopping list\n- bread\n"
        try await notes.saveThrowing(to: notesURL, for: .forCreating)
        Narration.event("notes.txt saved (.forCreating): \(Narration.quoted(notes.text))")

        let pictureURL = folder.appendingPathComponent("picture.png")
        let picture = ImageDocument(fileURL: pictureURL)
        picture.image = RGBAImage.gradient(width: 48, height: 16)
        try await picture.saveThrowing(to: pictureURL, for: .forCreating)
        let size = (try? FileManager.default.attributesOfItem(atPath: pictureURL.path)[.size] as? Int) ?? 0
        Narration.event("picture.png saved: \(picture.image.width)×\(picture.image.height) PNG, \(size) bytes")
        // 24-bit colour escapes only for a terminal: `clouddocs-demo > file` keeps plain text.
        if Narration.isTerminal {
            for line in TerminalRenderer(maxColumns: 48).lines(for: picture.image) {
                Narration.say("              " + line)
            }
        }
        try await picture.closeThrowing()

        // 2. Another process edits notes.txt while this one has it open.
        Narration.step(2, "A second process edits notes.txt while this process has it open")
        let states = notes.stateChanges
        _ = try await SecondProcess.start(.appendLine, editing: notesURL)
        let arrived = await waitUntil(states) { _ in notes.text.contains("second process") }
        if arrived {
            Narration.event("this process's document reloaded by itself: \(Narration.quoted(notes.text))")
        } else {
            Narration.event("the change did not arrive: \(givenUp)")
        }

        // 3. An edit here, with undo.
        Narration.step(3, "Editing here: undoable changes drive the change count")
        notes.append("- milk\n")
        Narration.event("appended “- milk”: unsaved changes: \(notes.hasUnsavedChanges)")
        notes.undoManager.undo()
        Narration.event("undo: unsaved changes: \(notes.hasUnsavedChanges)")
        notes.undoManager.redo()
        Narration.event("redo: unsaved changes: \(notes.hasUnsavedChanges)")

        // 4. A save error and its recovery.
        Narration.step(4, "A save error and its recovery")
        let away = folder.deletingLastPathComponent().appendingPathComponent(folder.lastPathComponent + "-moved-away")
        try FileManager.default.moveItem(at: folder, to: away)
        Narration.event("the folder was moved away behind the document's back (as a sync tool might)")
        do {
            try await notes.saveThrowing(to: notesURL, for: .forOverwriting)
            Narration.event("unexpected: the save succeeded")
        } catch {
            Narration.event("save failed: \((error as? LocalizedError)?.failureReason ?? error.localizedDescription)")
            Narration.event("state is now \(notes.documentState); the unsaved change is kept: \(notes.hasUnsavedChanges)")
        }
        try FileManager.default.moveItem(at: away, to: folder)
        Narration.event("the folder is back")
        try await notes.saveThrowing(to: notesURL, for: .forOverwriting)
        Narration.event("saved again: state \(notes.documentState), unsaved changes: \(notes.hasUnsavedChanges)")
        let onDisk = try String(contentsOf: notesURL, encoding: .utf8)
        Narration.event("on disk: \(Narration.quoted(onDisk))")

        // 5. A read here makes the second process save its unsaved edit first.
        try await readSavesTheOtherEdit(notes, at: notesURL, step: 5)

        // 6–8. Both processes edit at once: merged, then a conflict, shown and resolved.
        try await ConflictSteps.merge(notes, at: notesURL, step: 6)
        try await ConflictSteps.conflict(notes, at: notesURL, step: 7)
        try await ConflictSteps.resolve(notes, at: notesURL, step: 8)

        // 9. Into the cloud: a coordinated move the open document follows, seen by a live query
        //    in another process.
        try await CloudStep.moveToCloud(notes, root: folder.appendingPathComponent("cloud", isDirectory: true), step: 9)

        // 10. Closing.
        Narration.step(10, "Closing")
        try await notes.closeThrowing()
        Narration.event("notes.txt closed (saved in the cloud container)")
    }

    /// The second process opens notes.txt and edits it without saving; a coordinated read here
    /// asks its document to save first (a presenter in another process), so the read gets the
    /// edit. The read runs off the main actor, as coordinated accesses of an open document's file
    /// must: this process's own document answers the coordinator there.
    private static func readSavesTheOtherEdit(_ notes: TextDocument, at url: URL, step: Int) async throws {
        Narration.step(step, "A read here makes the second process save its unsaved edit first")
        let states = notes.stateChanges
        let second = try await SecondProcess.start(.replace("- bread\n", with: "- rye bread\n"), editing: url,
                                                   timing: .keepUnsavedUntilTold)
        let plain = (try? String(contentsOf: url, encoding: .utf8)) ?? "(unreadable)"
        Narration.event("on disk, read without coordinating: \(Narration.quoted(plain))")
        let read = try await Task.detached {
            try Coordinator().coordinate(readingItemAt: url) { try String(contentsOf: $0, encoding: .utf8) }
        }.value
        Narration.event("a coordinated read here: \(Narration.quoted(read))")
        Narration.event(read.contains("- rye bread") ? "the second process saved its edit before the read, as Apple's coordinator asks"
                                                     : "the read did not get the second process's edit")
        await second.goOn()
        if !notes.text.contains("- rye bread"),
           !(await waitUntil(states) { _ in notes.text.contains("- rye bread") }) {
            Narration.event("the change did not arrive here: \(givenUp)")
        }
        Narration.event("this process's document reloaded by itself: \(Narration.quoted(notes.text))")
    }

    /// Prints every state change of `document`, as the notification arrives.
    private static func observeStates(of document: TextDocument) -> any NSObjectProtocol {
        NotificationCenter.default.addObserver(forName: CloudDocument.stateChangedNotification, object: document, queue: nil) { note in
            guard let document = note.object as? CloudDocument else { return }
            Narration.event("notification: \(document.localizedName) is now \(document.documentState)")
        }
    }

    /// How long ``waitUntil(_:_:)`` waits at most: a never-hang guard, not a sequencing step. Every
    /// wait of the demo ends on an event — a state change of the document, which a reload or a
    /// conflict always makes, milliseconds after the other process's coordinated write. The guard
    /// only ends a demo that went wrong (the second process died, or the presenter message was
    /// lost), so that it reports it instead of hanging; no machine, however loaded, takes two
    /// minutes to deliver one message between two processes.
    static let neverHangLimit: Duration = .seconds(120)

    /// What the demo says when ``neverHangLimit`` ended a wait.
    static let givenUp = "gave up waiting after \(neverHangLimit) (did the second process die?)"

    /// Reads `states` until `condition` holds after a change. Event-driven: each check follows a
    /// state change; ``neverHangLimit`` only ends a wait that went wrong, it never sequences anything.
    /// `states` must have been taken before the action whose result is awaited (a stream receives
    /// the changes made after it was created).
    static func waitUntil(
        _ states: AsyncStream<DocumentState>, _ condition: @escaping @MainActor @Sendable (DocumentState) -> Bool
    ) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await state in states where await condition(state) { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: neverHangLimit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
