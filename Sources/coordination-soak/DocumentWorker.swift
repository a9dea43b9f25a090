import CloudDocuments
import ExampleDocuments
import FileCoordination
import Foundation

/// Keeps a `TextDocument` open on every shared file and loops over them: append a unique line,
/// save (`saveThrowing(to: fileURL, for: .forOverwriting)`), then read the file in a coordinated
/// read off the main actor (the `async` coordinator variant, library defaults, no timeout — it
/// asks the documents of the other processes to save first). A line is confirmed when such a
/// read, after a successful save that included it, sees it in the file. The documents of the
/// moving folder must follow its moves.
@MainActor
enum DocumentWorker {
    /// One open document and its lines not yet confirmed.
    final class Slot {
        let index: Int
        let document: TextDocument
        /// Appended, not yet in a successful save.
        var unsaved: [String] = []
        /// Saved, not yet seen in a read.
        var unconfirmed: [String] = []
        init(index: Int, document: TextDocument) {
            self.index = index
            self.document = document
        }
        /// Whether the file can move (it is in the moving folder).
        var canMove: Bool { index >= RunLayout.sharedAtTop }
    }

    static func run(_ context: WorkerContext) async {
        var slots: [Slot] = []
        for index in 0..<RunLayout.sharedCount {
            guard let url = context.layout.currentShared(index) else {
                context.log.anomaly("shared file \(index) not found at the start")
                continue
            }
            let document = TextDocument(fileURL: url)
            document.undoManager.levelsOfUndo = 1  // each undo step keeps a whole text: bound the memory
            do {
                try await document.openThrowing()
                slots.append(Slot(index: index, document: document))
            } catch {
                context.log.error(ErrorClassification.kind(of: error), ErrorClassification.message(error, during: "open \(url.path)"))
            }
        }
        await context.readyAndWaitForGo()
        var sequence = 0
        var turn = 0
        while !context.shouldStop && !slots.isEmpty {
            let slot = slots[turn % slots.count]
            turn += 1
            let line = SoakLine.make(.document, worker: context.index, sequence: sequence)
            sequence += 1
            slot.document.append(line + "\n")
            slot.unsaved.append(line)
            await save(slot, context)
            await read(slot, context)
        }
        await finish(slots, context)
    }

    private static func save(_ slot: Slot, _ context: WorkerContext) async {
        let url = slot.document.fileURL
        do {
            try await slot.document.saveThrowing(to: url, for: .forOverwriting)
            for line in slot.unsaved { context.log.saved(line, to: url) }
            slot.unconfirmed += slot.unsaved
            slot.unsaved.removeAll()
            context.log.count("saves")
        } catch {
            record(error, slot, context, during: "save \(url.path)")
        }
    }

    /// A coordinated read of the document's file; confirms the lines of ours it sees.
    private static func read(_ slot: Slot, _ context: WorkerContext) async {
        let url = slot.document.fileURL
        let start = MonotonicClock.now()
        do {
            let data = try await Coordinator().coordinate(with: [.readingIntent(with: url)]) { intents in
                try Data(contentsOf: intents[0].url)
            }
            context.log.readDuration(nanoseconds: MonotonicClock.now() - start)
            context.log.count("reads")
            confirm(slot, seenIn: data, at: url, context)
        } catch {
            record(error, slot, context, during: "coordinated read of \(url.path)")
        }
    }

    private static func confirm(_ slot: Slot, seenIn data: Data, at url: URL, _ context: WorkerContext) {
        guard !slot.unconfirmed.isEmpty else { return }
        let lines = Set(String(decoding: data, as: UTF8.self).split(separator: "\n"))
        slot.unconfirmed.removeAll { line in
            guard lines.contains(Substring(line)) else { return false }
            context.log.confirmed(line, in: url)
            context.log.count("appends")
            return true
        }
    }

    private static func record(_ error: any Error, _ slot: Slot, _ context: WorkerContext, during operation: String) {
        let kind: ErrorKind = slot.canMove && ErrorClassification.isNotFound(error)
            ? .moveRace : ErrorClassification.kind(of: error)
        context.log.error(kind, ErrorClassification.message(error, during: operation))
    }

    /// At the stop: checks every document still has its file, closes them (saving what is
    /// unsaved), and reads each file once more to confirm what is left.
    private static func finish(_ slots: [Slot], _ context: WorkerContext) async {
        for slot in slots {
            let document = slot.document
            // A folder move that landed in the last moment before the stop may still be on its
            // way to this document (presenters hear of a move after the mover's write, on their
            // own queue): its notice gets a few seconds, counted, before a missing file counts
            // as an anomaly.
            var waited = 0
            while !FileManager.default.fileExists(atPath: document.fileURL.path), waited < 100 {
                if waited == 0 { context.log.count("late-move-notices") }
                try? await Task.sleep(for: .milliseconds(50))
                waited += 1
            }
            if !FileManager.default.fileExists(atPath: document.fileURL.path) {
                context.log.anomaly("the document of \(RunLayout.sharedName(slot.index)) is at \(document.fileURL.path), where there is no file"
                                    + " (it is at \(context.layout.currentShared(slot.index)?.path ?? "no known place"))")
            }
            if document.documentState.contains(.inConflict) { context.log.count("documents-in-conflict") }
            do {
                try await document.closeThrowing()
                for line in slot.unsaved { context.log.saved(line, to: document.fileURL) }
                slot.unconfirmed += slot.unsaved
                slot.unsaved.removeAll()
            } catch {
                record(error, slot, context, during: "close \(document.fileURL.path)")
            }
        }
        for slot in slots where !slot.unconfirmed.isEmpty {
            guard let url = context.layout.currentShared(slot.index) else { continue }
            do {
                let data = try await Coordinator().coordinate(with: [.readingIntent(with: url)]) { intents in
                    try Data(contentsOf: intents[0].url)
                }
                confirm(slot, seenIn: data, at: url, context)
            } catch {
                record(error, slot, context, during: "final read of \(url.path)")
            }
        }
        let left = slots.reduce(0) { $0 + $1.unconfirmed.count }
        let unsaved = slots.reduce(0) { $0 + $1.unsaved.count }
        context.log.count("saved-never-seen", by: left)
        context.log.count("never-saved", by: unsaved)
    }
}
