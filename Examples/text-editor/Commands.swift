import ExampleDocuments
import Foundation

/// What each command does, through `TextDocument`.
@MainActor
enum Commands {
    static func new(_ url: URL, text: String) async throws {
        let document = TextDocument(fileURL: url)
        document.text = text
        try await document.saveThrowing(to: url, for: .forCreating)
        try await close(document)
        print("Created \(url.lastPathComponent) (\(text.utf8.count) bytes)")
    }

    static func show(_ url: URL) async throws {
        let document = try await opened(url)
        let text = document.text
        try await close(document)
        print(text, terminator: text.utf8.last == UInt8(ascii: "\n") || text.isEmpty ? "" : "\n")
    }

    /// Appends `text` in one coordinated write (``OneShotTextEdit``), so concurrent runs each
    /// add theirs.
    static func append(_ url: URL, text: String) async throws {
        try await OneShotTextEdit.edit(url) { $0 += text }
        print("Appended \(text.utf8.count) bytes to \(url.lastPathComponent)")
    }

    /// Replaces every occurrence of `old` (``TextDocument/replace(_:with:)``'s rule) in one
    /// coordinated write (``OneShotTextEdit``).
    static func replace(_ url: URL, old: String, new: String) async throws {
        let count = try await OneShotTextEdit.edit(url) { text in
            let replaced = TextDocument.replacingOccurrences(of: old, with: new, in: text)
            text = replaced.text
            return replaced.count
        }
        print("Replaced \(count) occurrence\(count == 1 ? "" : "s") in \(url.lastPathComponent)")
    }

    /// Edits a document, then walks the undo stack back and forth, printing the text and whether
    /// the document has unsaved changes at each step. Ends where it started: nothing is saved.
    static func undoDemo(_ url: URL) async throws {
        let document = try await opened(url)
        let manager = document.undoManager
        func report(_ step: String) {
            let preview = document.text.replacingOccurrences(of: "\n", with: "⏎")
            print("\(step.padding(toLength: 24, withPad: " ", startingAt: 0)) “\(preview.prefix(60))”  unsaved changes: \(document.hasUnsavedChanges ? "yes" : "no")")
        }
        report("opened")
        document.append(" — first edit")
        report("append")
        _ = document.replace("first", with: "second")
        report("replace")
        print("undo menu: “Undo \(manager.undoActionName)”, can redo: \(manager.canRedo)")
        manager.undo()
        report("undo")
        manager.undo()
        report("undo")
        manager.redo()
        report("redo")
        manager.undo()
        report("undo")
        try await close(document)  // back at the saved text: nothing to save
        print("closed without saving (the text is back where it started)")
    }

    static func info(_ url: URL) async throws {
        let document = try await opened(url)
        let text = document.text
        let bytes = text.utf8.count + (document.hasByteOrderMark ? 3 : 0)
        let lines = LineStatistics(text)
        let modified = document.fileModificationDate.map { ISO8601DateFormatter().string(from: $0) } ?? "unknown"
        print("""
            Name:          \(document.localizedName)
            Type:          \(document.fileType ?? "unknown")
            Size:          \(bytes) bytes\(document.hasByteOrderMark ? " (with a UTF-8 byte-order mark)" : "")
            Lines:         \(lines.lines)
            Line endings:  \(lines.endings)
            State:         \(document.documentState)
            Modified:      \(modified)
            """)
        try await close(document)
    }

    /// Opens the document and prints every state change and every change of its text until
    /// `changes` text changes were seen (or forever), and every move or deletion of the file
    /// (by any program: `mv` and `rm` too). Ends when the file is deleted (the document closes).
    static func watch(_ url: URL, changes limit: Int?) async throws {
        try FolderRefusal.check(url)
        let document = TextDocument(fileURL: url)
        let states = document.stateChanges
        // Registered before the document: presenters of one file are messaged in the order they
        // were registered, so the deletion is printed by the time the document closes on it.
        let moves = WatchPresenter(url)
        Coordinator.addFilePresenter(moves)
        defer { Coordinator.removeFilePresenter(moves) }
        try await document.openThrowing()
        print("Watching \(url.lastPathComponent) — \(document.text.utf8.count) bytes. Edit it from another process.")
        fflushStandardOutput()
        var last = document.text
        var seen = 0
        for await state in states {
            print("state: \(state)")
            let now = document.text
            if now != last {
                seen += 1
                print("changed by another process (\(now.utf8.count) bytes):")
                print(now, terminator: now.utf8.last == UInt8(ascii: "\n") ? "" : "\n")
                last = now
            }
            fflushStandardOutput()
            if state.contains(.closed) {  // the file was deleted
                await moves.finishMessages()
                break
            }
            if let limit, seen >= limit { break }
        }
        try await close(document)
    }

    /// Opens the text document at `url`; a plain folder is refused before anything is read.
    private static func opened(_ url: URL) async throws -> TextDocument {
        try FolderRefusal.check(url)
        let document = TextDocument(fileURL: url)
        try await document.openThrowing()
        return document
    }

    /// Closes `document`, which saves unsaved changes first. When that save found the file
    /// changed by another program and kept that program's version as a conflict version, says
    /// so on standard error (the close itself succeeds).
    ///
    /// - Throws: What closing throws.
    private static func close(_ document: TextDocument) async throws {
        guard document.hasUnsavedChanges else { return try await document.closeThrowing() }
        let url = document.fileURL
        if try await ConflictVersions.savingKeptConflict(at: url, { try await document.closeThrowing() }) {
            FileHandle.standardError.write(Data((ConflictVersions.keptConflictNote(of: url, tool: "text-editor") + "\n").utf8))
        }
    }

    private static func fflushStandardOutput() {
        fflush(nil)  // all output streams: lines reach a pipe at once
    }

    /// A one-line message for an error: the library's reason, without advice meant for apps.
    nonisolated static func describe(_ error: any Error) -> String {
        (error as? LocalizedError)?.failureReason ?? error.localizedDescription
    }
}
