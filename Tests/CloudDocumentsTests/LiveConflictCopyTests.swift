import FileCoordination
import Foundation
import Glibc
import TestSupport
import Testing
@testable import CloudDocuments

// Conflict copies live: an open document gains and loses `.inConflict` as copies appear and
// disappear in its folder, whoever makes them; Syncthing's delete-then-rename replacement does not
// disturb it; an rclone bisync winner is promoted while the document is open.

/// Runs a program (`/bin/mv`, `/bin/rm`, …) as another process and waits for it to exit.
func runProgram(_ path: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// `rename(2)`, as a sync tool does it (not coordinated).
func renameUncoordinated(_ from: URL, _ to: URL) {
    #expect(rename(from.path, to.path) == 0, "rename \(from.lastPathComponent) → \(to.lastPathComponent): errno \(errno)")
}

@Suite("Conflict copies live: .inConflict and version messages", .timeLimit(.minutes(2 * Polling.deadlineScale)))
struct LiveConflictCopyTests {
    static let copyName = "note.sync-conflict-20261123-051644-SUBNBV7.txt"

    @Test("a copy moved in by another process turns an open document .inConflict; deleting it by another program clears it")
    func anotherProcessMakesAndDeletesACopy() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "mine") { folder, url, document in
                var stream = StateStream(document)
                let temporary = try makeFile(".syncthing.\(Self.copyName).tmp", containing: "theirs", in: folder)
                let copy = folder.appendingPathComponent(Self.copyName)

                #expect(try runProgram("/bin/mv", [temporary.path, copy.path]) == 0)
                #expect(await stream.until { $0.contains(.inConflict) }.last == .inConflict)
                let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
                #expect(versions.map(\.url) == [copy])
                #expect(document.text == "mine" && document.documentState == .inConflict)

                #expect(try runProgram("/bin/rm", [copy.path]) == 0)
                #expect(await stream.until { !$0.contains(.inConflict) }.last == .normal)
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: url).isEmpty)
                #expect(document.text == "mine")
                try await document.closeThrowing()
            }
        }
    }

    /// Twenty copies appear and go: each one sets and clears `.inConflict`. How fast is measured
    /// by `versions-benchmark` (row b), not by a unit test.
    @Test("a copy appearing and going twenty times: .inConflict each time, .normal after")
    func twentyCopies() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "mine") { folder, _, document in
                var stream = StateStream(document)
                let copy = folder.appendingPathComponent(Self.copyName)
                for round in 0..<20 {
                    let temporary = try makeFile(".syncthing.\(Self.copyName).tmp", containing: "theirs \(round)", in: folder)
                    renameUncoordinated(temporary, copy)
                    let gained = await stream.until { $0.contains(.inConflict) }
                    #expect(gained.last?.contains(.inConflict) == true, "round \(round): .inConflict")
                    #expect(unlink(copy.path) == 0)
                    let lost = await stream.until { !$0.contains(.inConflict) }
                    #expect(lost.last.map { !$0.contains(.inConflict) } == true, "round \(round): .inConflict cleared")
                }
                #expect(document.documentState == .normal)
                try await document.closeThrowing()
            }
        }
    }

    @Test("presenters of the item get presentedItemDidGain / presentedItemDidLose for a copy, nothing else")
    func presenterMessages() async throws {
        try await withPrivateVersionStore {
            let folderScratch = try Scratch("clouddocs-live")
            defer { folderScratch.remove() }
            let folder = folderScratch.url
            let url = try makeFile("note.txt", containing: "mine", in: folder)
            let presenter = VersionMessageRecorder(url)
            Coordinator.addFilePresenter(presenter)
            defer { Coordinator.removeFilePresenter(presenter) }
            let id = copyIdentifier(Self.copyName)

            let temporary = try makeFile(".syncthing.\(Self.copyName).tmp", containing: "theirs", in: folder)
            #expect(try runProgram("/bin/mv", [temporary.path, folder.appendingPathComponent(Self.copyName).path]) == 0)
            #expect(try await presenter.wait { $0.contains("gain \(id)") })
            #expect(try runProgram("/bin/rm", [folder.appendingPathComponent(Self.copyName).path]) == 0)
            #expect(try await presenter.wait { $0.contains("lose \(id)") })
            #expect(presenter.messages.withLock { $0 } == ["gain \(id)", "lose \(id)"])
        }
    }

    @Test("resolving the copy of an open document clears .inConflict")
    func resolvingClears() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "mine") { folder, url, document in
                var stream = StateStream(document)
                let temporary = try makeFile(".syncthing.\(Self.copyName).tmp", containing: "theirs", in: folder)
                renameUncoordinated(temporary, folder.appendingPathComponent(Self.copyName))
                _ = await stream.until { $0.contains(.inConflict) }
                for conflict in try FileVersion.unresolvedConflictVersionsOfItem(at: url) { try conflict.resolve() }
                #expect(await stream.until { $0 == .normal }.last == .normal)
                #expect(listing(folder) == ["note.txt"])
                try await document.closeThrowing()
            }
        }
    }

    /// Syncthing's replacement of a changed file: the new contents in `.syncthing.NAME.tmp`,
    /// NAME deleted, the temporary renamed to NAME.
    func replaceLikeSyncthing(_ url: URL, with text: String) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".syncthing.\(url.lastPathComponent).tmp")
        try put(text, at: temporary)
        #expect(unlink(url.path) == 0)
        renameUncoordinated(temporary, url)
    }

    @Test("Syncthing's delete-then-rename: a clean open document stays open and loads the new contents")
    func syncthingReplacementOfCleanDocument() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "version 1") { _, url, document in
                try replaceLikeSyncthing(url, with: "version 2 from the other device")
                try await Polling.until("the document to reload") { document.text == "version 2 from the other device" }
                await drainDocumentQueue(document)
                #expect(!document.documentState.contains(.closed))
                #expect(document.handledErrors.withLock { $0 }.isEmpty)
                #expect(isRegistered(document))
                // It goes on as usual: a save is not a conflict (the document read the new file).
                document.edit("version 3")
                try await document.saveThrowing(to: url, for: .forOverwriting)
                #expect(text(at: url) == "version 3")
                #expect(try FileVersion.otherVersionsOfItem(at: url).isEmpty)
                #expect(document.documentState == .normal)
                try await document.closeThrowing()
            }
        }
    }

    @Test("Syncthing's delete-then-rename: a dirty open document keeps its edits and undo; its save keeps theirs as a conflict")
    func syncthingReplacementOfDirtyDocument() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "version 1") { _, url, document in
                let witness = VersionMessageRecorder(url)   // tells when the monitor has passed the change on
                Coordinator.addFilePresenter(witness)
                defer { Coordinator.removeFilePresenter(witness) }
                document.edit("my unsaved edit")
                try replaceLikeSyncthing(url, with: "version 2 from the other device")
                #expect(try await witness.wait { $0.contains("change") })
                await drainDocumentQueue(document)

                #expect(document.text == "my unsaved edit")
                #expect(document.hasUnsavedChanges)
                #expect(document.undoManager.canUndo)
                #expect(!document.documentState.contains(.closed))
                #expect(document.handledErrors.withLock { $0 }.isEmpty)
                #expect(isRegistered(document))

                var stream = StateStream(document)
                try await document.saveThrowing(to: url, for: .forOverwriting)
                #expect(text(at: url) == "my unsaved edit")
                #expect(try conflictTexts(of: url) == ["version 2 from the other device"])
                #expect(await stream.until { $0.contains(.inConflict) }.last == .inConflict)
                try await document.closeThrowing()
            }
        }
    }

    @Test("rclone bisync with the document open: the newer side's copy becomes the file, the other stays a conflict")
    func bisyncPromotionLive() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(named: "notes.md", containing: "base") { folder, url, document in
                var stream = StateStream(document)
                let path1 = folder.appendingPathComponent("notes.md..path1")
                let path2 = folder.appendingPathComponent("notes.md..path2")
                // What rclone bisync does on this side: rename the local version, copy the other side's in.
                renameUncoordinated(url, path1)
                try setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), of: path1)
                try put("theirs, newer", at: path2)
                try setModificationDate(Date(timeIntervalSince1970: 1_700_000_100), of: path2)

                #expect(await stream.until { $0.contains(.inConflict) }.last?.contains(.inConflict) == true)
                try await Polling.until("the document to show the newer copy") { document.text == "theirs, newer" }
                #expect(text(at: url) == "theirs, newer")
                #expect(!FileManager.default.fileExists(atPath: path2.path))
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: url).map(\.url) == [path1])
                await drainDocumentQueue(document)
                #expect(document.documentState.contains(.inConflict))
                #expect(!document.documentState.contains(.closed))

                try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first).resolve()
                #expect(await stream.until { $0 == .normal }.last == .normal)
                #expect(listing(folder) == ["notes.md"])
                try await document.closeThrowing()
            }
        }
    }
}
