import ExampleDocuments
import Foundation

/// Steps 6–8: this process has unsaved edits while the second process saves the same document.
/// The second process opens the document first (its coordinated read finds nothing unsaved here),
/// this process edits, then the second process edits and saves and ends (`goOn` returns after its
/// `DONE`), and only then does this process save: the order is fixed without sleeping, and the
/// save here always finds the file changed since the document last read or wrote it.
@MainActor
enum ConflictSteps {
    /// Different lines edited: `TextDocument`'s three-way merge keeps both edits, no conflict.
    static func merge(_ notes: TextDocument, at url: URL, step: Int) async throws {
        Narration.step(step, "Both processes edit notes.txt at once, on different lines: merged")
        let second = try await SecondProcess.start(.replace("Shopping list\n", with: "Shopping list for Saturday\n"),
                                                   editing: url, timing: .editWhenTold)
        notes.append("- eggs\n")
        Narration.event("here, unsaved: appended “- eggs”")
        await second.goOn()
        try await notes.saveThrowing(to: url, for: .forOverwriting)
        Narration.event("saved here: the file had changed; the edits do not overlap, so TextDocument merged them")
        let conflict = notes.documentState.contains(.inConflict) ? "in conflict" : "no conflict"
        Narration.event("on disk: \(Narration.quoted(text(of: url))); \(conflict)")
    }

    /// The same line edited: the save keeps the other process's text as an unresolved conflict
    /// version, and the document becomes `.inConflict`. Lists the versions.
    static func conflict(_ notes: TextDocument, at url: URL, step: Int) async throws {
        Narration.step(step, "Both processes change the same line at once: a conflict")
        let states = notes.stateChanges
        let second = try await SecondProcess.start(.replace("- milk\n", with: "- whole milk\n"), editing: url, timing: .editWhenTold)
        notes.replace("- milk\n", with: "- oat milk\n")
        Narration.event("here, unsaved: “- milk” → “- oat milk”")
        await second.goOn()
        try await notes.saveThrowing(to: url, for: .forOverwriting)
        Narration.event("saved here: the edits overlap, so the file's text was kept as a conflict version first")
        if !notes.documentState.contains(.inConflict) {
            _ = await Demo.waitUntil(states) { $0.contains(.inConflict) }
        }
        Narration.event("state \(notes.documentState)")

        let current = try FileVersion.currentVersionOfItem(at: url)
        Narration.event("current version: \(Narration.quoted(text(of: url))), \(describe(current))")
        let conflicts = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
        for (index, version) in conflicts.enumerated() {
            Narration.event("conflict version \(index + 1): \(Narration.quoted(text(of: version.url))), \(describe(version))")
        }
    }

    /// Picks the conflict version (the second process's text) the way an app does with an open
    /// document: the document takes its text (an undoable change) and saves; then every conflict
    /// version is resolved and removed, and `.inConflict` clears.
    static func resolve(_ notes: TextDocument, at url: URL, step: Int) async throws {
        Narration.step(step, "Resolving the conflict: this process picks the second process's version")
        let conflicts = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
        guard let chosen = conflicts.first else {
            Narration.event("there is no conflict to resolve")
            return
        }
        notes.text = text(of: chosen.url)
        try await notes.saveThrowing(to: url, for: .forOverwriting)
        Narration.event("the document took conflict version 1's text and saved it (undoable)")
        let states = notes.stateChanges
        // Coordinated writes of the open document's file: not on the main actor, where the
        // document answers the coordinator.
        try await Task.detached {
            for conflict in conflicts {
                try conflict.resolve()
                try conflict.remove()
            }
        }.value
        Narration.event("resolved and removed \(conflicts.count) conflict version\(conflicts.count == 1 ? "" : "s")")
        // The last messages of those writes (conflict check, editing enabled again) arrive on
        // the main actor after them: wait for the document to settle.
        if notes.documentState != .normal,
           !(await Demo.waitUntil(states) { _ in notes.documentState == .normal }) {
            Narration.event("the document did not settle: \(Demo.givenUp)")
        }
        let left = try FileVersion.unresolvedConflictVersionsOfItem(at: url).count
        Narration.event("state \(notes.documentState); unresolved conflict versions left: \(left)")
        Narration.event("on disk: \(Narration.quoted(text(of: url)))")
    }

    /// The file's text, or what went wrong reading it.
    private static func text(of url: URL) -> String {
        (try? String(contentsOf: url, encoding: .utf8)) ?? "(unreadable)"
    }

    /// When and where a version was saved.
    private static func describe(_ version: FileVersion) -> String {
        let time = version.modificationDate.map { timeFormatter.string(from: $0) } ?? "an unknown time"
        let computer = version.localizedNameOfSavingComputer.map { " on \($0)" } ?? ""
        return "saved\(computer) at \(time)"
    }

    private static let timeFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter
    }()
}
