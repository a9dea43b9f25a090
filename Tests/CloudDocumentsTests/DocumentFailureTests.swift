import Foundation
import Glibc
import Testing
@testable import CloudDocuments

// The failure cases of the lifecycle suite: opens, saves, closes and reverts that fail.
extension DocumentLifecycleTests {
    // MARK: Open failures

    @Test("opening a missing file throws fileNotFound, stays closed, creates nothing, registers nothing")
    func openMissing() async throws {
        try await withNote(named: "absent.txt", containing: nil) { folder, url, document in
            let recorder = StateRecorder(document)
            let error = await expectDocumentError("fileNotFound") { try await document.openThrowing() }
            #expect(error?.url == url)
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [])
            #expect(!isRegistered(document))
            #expect(listing(folder) == [])
            #expect(document.calls("error") == 1)
            #expect(document.calls("load") == 0)
        }
    }

    @Test("load rejecting the contents → couldNotLoad with the underlying error; closed; file untouched")
    func openRejected() async throws {
        try await withNote(named: "bad.txt", containing: "REJECT me") { folder, url, document in
            let before = bytes(at: url)
            let recorder = StateRecorder(document)
            let error = await expectDocumentError("couldNotLoad") { try await document.openThrowing() }
            #expect(error?.url == url)
            #expect(error?.underlying is NoteDocument.LoadRejected)
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [])
            #expect(!isRegistered(document))
            #expect(bytes(at: url) == before)
            #expect(listing(folder) == ["bad.txt"])
            #expect(document.lastError is DocumentError)
        }
    }

    @Test("unreadable items → notReadable, closed, untouched: a FIFO, and a file whose read fails with EIO")
    func openUnreadable() async throws {
        try await Scratch.with { folder in
            let fifo = folder.appendingPathComponent("pipe.txt")
            #expect(mkfifo(fifo.path, 0o644) == 0)
            let document = NoteDocument(fileURL: fifo)
            let error = await expectDocumentError("notReadable") { try await document.openThrowing() }
            #expect(error?.detail?.contains("FIFO") == true)
            #expect(document.documentState == .closed)
            #expect(!isRegistered(document))

            // /proc/self/mem is a regular file whose first page is unmapped: read(2) fails with EIO.
            let link = folder.appendingPathComponent("mem.txt")
            #expect(symlink("/proc/self/mem", link.path) == 0)
            let failing = NoteDocument(fileURL: link)
            let failure = await expectDocumentError("notReadable") { try await failing.openThrowing() }
            #expect(failure?.detail?.contains("read failed") == true)
            #expect(failing.documentState == .closed)
            #expect(!isRegistered(failing))
            #expect(failing.calls("load") == 0)
        }
    }

    // MARK: Save failures

    @Test("a failed save → savingError, handleError, original intact, no temporary; the next save recovers")
    func failedSaveAndRecovery() async throws {
        try await withNote(containing: "original") { _, url, document in
            var stream = StateStream(document)
            let recorder = try await openRecordingStates(document)
            document.replaceText("edited")

            SafeSave.injectFailure(at: .write, errno: EIO, forTarget: url)
            let error = await expectDocumentError("saveFailed") { try await document.saveThrowing(to: url, for: .forOverwriting) }
            #expect(error?.errorNumber == .ioError)
            #expect(document.documentState == .savingError)
            expectOnlyFile(url, holding: "original")
            #expect(document.hasUnsavedChanges, "the changes are kept")
            let handled = document.handledErrors.withLock { $0 }
            #expect(handled.count == 1)
            #expect(handled.first?.1 == true, "an explicit save permits user interaction")
            #expect(document.lastError is DocumentError)

            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(text(at: url) == "edited")
            #expect(document.documentState == .normal)
            #expect(!document.hasUnsavedChanges)
            #expect(recorder.recorded == [.normal, .savingError, .normal])
            #expect(await stream.next(3) == [.normal, .savingError, .normal])
            try await document.closeThrowing()
        }
    }

    @Test("an error thrown by contents(forType:) fails the save like a disk error")
    func contentsThrows() async throws {
        try await Scratch.with { folder in
            let url = try makeFile("image.unknownext", containing: "bytes", in: folder)
            // The base class's contents(forType:) throws unsupportedFileType.
            final class Plain: CloudDocument, @unchecked Sendable {
                override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {}
            }
            let document = Plain(fileURL: url)
            try await document.openThrowing()
            document.updateChangeCount(.done)
            await #expect(throws: DocumentError.self) { try await document.saveThrowing(to: url, for: .forOverwriting) }
            #expect(document.documentState == .savingError)
            #expect(text(at: url) == "bytes")
            expectCase("unsupportedFileType", of: document.lastError)
            #expect((document.lastError as? DocumentError)?.detail == "dyn.ext-unknownext")
        }
    }

    @Test("saving into a folder that vanished → folderMissing and savingError; saving after it is back recovers")
    func vanishedFolder() async throws {
        try await Scratch.with { folder in
            let sub = folder.appendingPathComponent("sub", isDirectory: true)
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
            let url = try makeFile("note.txt", containing: "v1", in: sub)
            let document = NoteDocument(fileURL: url)
            let recorder = try await openRecordingStates(document)
            try FileManager.default.removeItem(at: sub)
            document.replaceText("v2")
            await expectDocumentError("folderMissing") { try await document.saveThrowing(to: url, for: .forOverwriting) }
            #expect(document.documentState == .savingError)
            #expect(!FileManager.default.fileExists(atPath: sub.path), "nothing recreated the folder")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
            try await document.saveThrowing(to: url, for: .forOverwriting)
            expectOnlyFile(url, holding: "v2")
            #expect(recorder.recorded == [.normal, .savingError, .normal])
            try await document.closeThrowing()
        }
    }

    @Test("a full disk (64 KiB tmpfs) → diskFull, savingError, original bytes intact, no temporary left",
          .enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage)))
    func diskFull() async throws {
        try await SmallTmpfs.withMount(size: "64k") { point in
            let original = String(repeating: "original line\n", count: 100)
            let url = try makeFile("note.txt", containing: original, in: point)
            let document = NoteDocument(fileURL: url)
            let recorder = try await openRecordingStates(document)
            document.replaceText(String(repeating: "x", count: 200 * 1024))
            await expectDocumentError("diskFull") { try await document.saveThrowing(to: url, for: .forOverwriting) }
            #expect(document.documentState == .savingError)
            expectOnlyFile(url, holding: original, "the temporary file was removed")
            #expect(document.hasUnsavedChanges)

            document.replaceText("small again")
            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(text(at: url) == "small again")
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.normal, .savingError, .normal])
            try await document.closeThrowing()
        }
    }

    // MARK: Close and revert failures

    @Test("close whose save fails throws, keeps the document open with savingError; closing again works")
    func closeSaveFails() async throws {
        try await withNote(containing: "before") { _, url, document in
            let recorder = try await openRecordingStates(document)
            document.edit("after")
            SafeSave.injectFailure(at: .rename, errno: EIO, forTarget: url)
            await #expect(throws: DocumentError.self) { try await document.closeThrowing() }
            #expect(document.documentState == .savingError)
            #expect(isRegistered(document))
            #expect(document.hasUnsavedChanges)
            expectOnlyFile(url, holding: "before")
            try await document.closeThrowing()
            #expect(text(at: url) == "after")
            #expect(recorder.recorded == [.normal, .savingError, .normal, .closed])
        }
    }

    @Test("a failed revert keeps the old contents, unsaved changes and state, and throws")
    func revertFails() async throws {
        try await withOpenNote(containing: "disk 1") { folder, url, document in
            let recorder = StateRecorder(document)
            document.edit("local edit")
            try put("REJECT this", at: url)
            await #expect(throws: DocumentError.self) { try await document.revertThrowing(toContentsOf: url) }
            #expect(document.text == "local edit")
            #expect(document.hasUnsavedChanges)
            #expect(document.undoManager.canUndo)
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.editingDisabled, .normal])
            #expect(text(at: url) == "REJECT this")

            let missing = folder.appendingPathComponent("missing.txt")
            await #expect(throws: DocumentError.self) { try await document.revertThrowing(toContentsOf: missing) }
            #expect(document.fileURL == url)
            #expect(document.text == "local edit")

            let closed = NoteDocument(fileURL: url)
            await expectDocumentError("documentClosed") { try await closed.revertThrowing(toContentsOf: url) }
        }
    }
}
