import Foundation
import SystemSupport
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

// The failure cases of the same suite are in DocumentFailureTests.swift.
@Suite("CloudDocument: open, save, close, revert, states", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct DocumentLifecycleTests {
    @Test("a new document is closed, with identity derived from its URL and nothing loaded")
    @MainActor
    func newDocument() throws {
        let url = URL(fileURLWithPath: "/tmp/folder/My Notes.txt")
        let document = NoteDocument(fileURL: url)
        #expect(document.documentState == .closed)
        #expect(document.fileURL == url)
        #expect(document.presentedItemURL == url)
        #expect(document.fileType == "public.plain-text")
        #expect(document.savingFileType == "public.plain-text")
        #expect(document.localizedName == "My Notes")
        #expect(document.fileModificationDate == nil)
        #expect(document.progress == nil)
        #expect(document.hasUnsavedChanges == false)
        #expect(document.lastError == nil)
        #expect(document.fileNameExtension(forType: "public.png", saveOperation: .forCreating) == "png")
        #expect(!isRegistered(document))
    }

    @Test("open → normal, save, close → closed: exact state sequence, presenter registration, file bytes")
    func openSaveClose() async throws {
        try await withNote(containing: "version 1") { folder, url, document in
            var stream = StateStream(document)
            let recorder = try await openRecordingStates(document)
            #expect(document.documentState == .normal)
            #expect(document.text == "version 1")
            #expect(isRegistered(document))
            let info = try FileManager.default.attributesOfItem(atPath: url.path)
            let modified = try #require(info[.modificationDate] as? Date)
            #expect(abs(try #require(document.fileModificationDate).timeIntervalSince(modified)) < 0.000_01)
            #expect(recorder.recorded == [.normal])

            document.replaceText("version 2")
            #expect(document.hasUnsavedChanges)
            try await document.saveThrowing(to: url, for: .forOverwriting)
            expectSaved(document, at: url, holding: "version 2")
            #expect(listing(folder) == ["note.txt"])
            #expect(recorder.recorded == [.normal], "a successful save of a normal document changes no state")

            try await document.closeThrowing()
            #expect(document.documentState == .closed)
            #expect(!isRegistered(document))
            #expect(recorder.recorded == [.normal, .closed])
            #expect(await stream.next(2) == [.normal, .closed])
            #expect(recorder.postedOnMainThread)
            #expect(document.hooksOnMainActor.withLock { $0 })
            #expect(document.hookCalls.withLock { $0 } == ["load", "contents"])
        }
    }

    @Test("closing a closed document does nothing; opening an open one throws documentAlreadyOpen")
    func misuse() async throws {
        try await withNote(containing: "x") { _, _, document in
            let recorder = StateRecorder(document)
            try await document.closeThrowing()
            try await document.openThrowing()
            await #expect(throws: DocumentError.self) { try await document.openThrowing() }
            await expectDocumentError("documentAlreadyOpen") { try await document.openThrowing() }
            #expect(recorder.recorded == [.normal])
            #expect(document.calls("error") == 0, "misuse is thrown, not passed to handleError")
        }
    }

    @Test("saving a new (closed) document for creating writes it and opens it; a second creating save fails untouched")
    func createBySaving() async throws {
        try await withNote(named: "new.txt", containing: nil) { _, url, document in
            let recorder = StateRecorder(document)
            document.text = "fresh"
            try await document.saveThrowing(to: url, for: .forCreating)
            #expect(text(at: url) == "fresh")
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.normal])
            #expect(isRegistered(document))
            #expect(document.fileModificationDate != nil)

            let other = NoteDocument(fileURL: url)
            let otherRecorder = StateRecorder(other)
            other.text = "intruder"
            await #expect(throws: DocumentError.self) { try await other.saveThrowing(to: url, for: .forCreating) }
            expectCase("alreadyExists", of: other.lastError)
            #expect(text(at: url) == "fresh")
            #expect(other.documentState == .closed, "a closed document does not gain savingError")
            #expect(otherRecorder.recorded == [])
            #expect(other.calls("error") == 1)
            #expect(!isRegistered(other))
            try await document.closeThrowing()
        }
    }

    @Test("save to another URL moves the document there and re-registers the presenter")
    func saveAs() async throws {
        try await withOpenNote(named: "a.txt", containing: "A") { folder, first, document in
            let second = folder.appendingPathComponent("b.txt")
            document.replaceText("B")
            try await document.saveThrowing(to: second, for: .forCreating)
            #expect(document.fileURL == second)
            #expect(document.localizedName == "b")
            #expect(text(at: first) == "A")
            #expect(text(at: second) == "B")
            #expect(!document.hasUnsavedChanges)
            #expect(isRegistered(document))
            // The registry now knows it under the new URL: a coordinated write there reaches it.
            var stream = StateStream(document)
            try await coordinatedPut("from outside", at: second)
            #expect(await stream.until { $0 == .normal } == [.editingDisabled, .normal])
            #expect(document.text == "from outside")
            try await document.closeThrowing()
        }
    }

    // MARK: Close

    @Test("close saves unsaved changes first")
    func closeSaves() async throws {
        try await withNote(containing: "before") { _, url, document in
            let recorder = try await openRecordingStates(document)
            document.edit("after")
            try await document.closeThrowing()
            #expect(text(at: url) == "after")
            #expect(document.documentState == .closed)
            #expect(recorder.recorded == [.normal, .closed])
        }
    }

    @Test("reopening after close works and starts clean")
    func reopen() async throws {
        try await withOpenNote(containing: "one") { _, url, document in
            try await document.closeThrowing()
            try put("two", at: url)
            try await document.openThrowing()
            #expect(document.text == "two")
            #expect(!document.hasUnsavedChanges)
            #expect(isRegistered(document))
            try await document.closeThrowing()
        }
    }

    // MARK: Revert

    @Test("revert discards unsaved changes: editingDisabled during the reload, undo stack emptied")
    func revert() async throws {
        try await withOpenNote(containing: "disk 1") { _, url, document in
            let recorder = StateRecorder(document)
            document.edit("local edit")
            #expect(document.hasUnsavedChanges)
            try put("disk 2", at: url)  // uncoordinated: the document is not told
            try await document.revertThrowing(toContentsOf: url)
            #expect(document.text == "disk 2")
            #expect(!document.hasUnsavedChanges)
            #expect(!document.undoManager.canUndo)
            #expect(document.documentState == .normal)
            #expect(recorder.recorded == [.editingDisabled, .normal])
            #expect(document.hookCalls.withLock { $0 } == ["load", "disable", "load", "enable"])
            #expect(document.hooksOnMainActor.withLock { $0 })
            try await document.closeThrowing()
        }
    }

    @Test("revert to another URL reads it and makes it the document's URL and registration")
    func revertToOtherURL() async throws {
        try await withOpenNote(named: "first.txt", containing: "one") { folder, first, document in
            let second = try makeFile("second.txt", containing: "two", in: folder)
            try await document.revertThrowing(toContentsOf: second)
            #expect(document.fileURL == second)
            #expect(document.text == "two")
            #expect(isRegistered(document))
            document.edit("two, edited")
            try await document.closeThrowing()
            #expect(text(at: second) == "two, edited")
            #expect(text(at: first) == "one")
        }
    }

    @Test("a package document: open reads the folder as a FilePackage, save replaces it whole")
    func packageDocument() async throws {
        final class PackageDocument: CloudDocument, @unchecked Sendable {
            let package = Locked(FilePackage())
            override func contents(forType typeName: String) throws -> DocumentContents {
                .package(package.withLock { $0 })
            }
            override func load(fromContents contents: DocumentContents, ofType typeName: String?) throws {
                guard let loaded = contents.package else { throw DocumentError.contentsInvalid("not a package") }
                package.withLock { $0 = loaded }
            }
        }
        try await Scratch.with { folder in
            let url = folder.appendingPathComponent("Album.bundle", isDirectory: true)
            try FileManager.default.createDirectory(at: url.appendingPathComponent("images"), withIntermediateDirectories: true)
            try put("{\"title\":\"Album\"}", at: url.appendingPathComponent("index.json"))
            try put("pixels", at: url.appendingPathComponent("images/1.raw"))
            let document = PackageDocument(fileURL: url)
            try await document.openThrowing()
            let loaded = document.package.withLock { $0 }
            #expect(loaded.names == ["images", "index.json"])
            #expect(loaded["index.json"] == .file(Data("{\"title\":\"Album\"}".utf8)))
            try document.package.withLock { package in
                try package.setFile(Data("{\"title\":\"Renamed\"}".utf8), named: "index.json")
                _ = package.removeEntry(named: "images")
            }
            document.updateChangeCount(.done)
            try await document.closeThrowing()
            #expect(listing(url) == ["index.json"])
            #expect(text(at: url.appendingPathComponent("index.json")) == "{\"title\":\"Renamed\"}")
            #expect(listing(folder) == ["Album.bundle"], "no temporary package left")
        }
    }

    // MARK: Progress

    @Test("large files publish a Progress in bytes while loading and saving (threshold lowered to 1 KiB)")
    func progressAvailable() async throws {
        let content = String(repeating: "0123456789abcdef", count: 256)  // 4 KiB
        try await withNote(named: "big.txt", containing: content) { _, url, document in
            document.progressThreshold = 1024
            let seen = Locked<[(DocumentState, Int64?)]>([])
            let token = NotificationCenter.default.addObserver(
                forName: CloudDocument.stateChangedNotification, object: document, queue: nil
            ) { [document] note in
                let state = note.userInfo?[CloudDocument.stateUserInfoKey] as? DocumentState ?? .normal
                seen.withLock { $0.append((state, document.progress?.totalUnitCount)) }
            }
            defer { NotificationCenter.default.removeObserver(token) }

            try await document.openThrowing()
            #expect(document.text == content)
            #expect(document.progress == nil)
            document.text += "!"
            document.updateChangeCount(.done)
            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(document.progress == nil)
            let states = seen.withLock { $0 }
            #expect(states.map(\.0) == [[.closed, .progressAvailable], .normal, .progressAvailable, .normal])
            #expect(states.map(\.1) == [4096, nil, 4097, nil])
            try await document.closeThrowing()
        }
    }

    @Test("the progress's completed count reaches the byte count")
    func progressCompletes() async throws {
        try await withNote(named: "big.txt", containing: nil) { _, url, document in
            document.progressThreshold = 1
            document.text = String(repeating: "z", count: 3 * SafeSave.chunkSize + 5)
            let published = Locked<Progress?>(nil)
            let token = NotificationCenter.default.addObserver(
                forName: CloudDocument.stateChangedNotification, object: document, queue: nil
            ) { [document] _ in
                if let progress = document.progress { published.withLock { $0 = progress } }
            }
            defer { NotificationCenter.default.removeObserver(token) }
            try await document.saveThrowing(to: url, for: .forCreating)
            await drainDocumentQueue(document)
            let progress = try #require(published.withLock { $0 })
            let counts = await withCheckedContinuation { continuation in
                document.presentedItemOperationQueue.addOperation {
                    continuation.resume(returning: [progress.totalUnitCount, progress.completedUnitCount])
                }
            }
            #expect(counts == [Int64(3 * SafeSave.chunkSize + 5), Int64(3 * SafeSave.chunkSize + 5)])
            try await document.closeThrowing()
        }
    }

    // MARK: Announcements

    @Test("each stateChanges stream gets the changes made after it was created, in order")
    func streamsStartWhenCreated() async throws {
        try await withNote(containing: "x") { _, _, document in
            var early = StateStream(document)
            try await document.openThrowing()
            var late = StateStream(document)
            try await document.closeThrowing()
            #expect(await early.next(2) == [.normal, .closed])
            #expect(await late.next(1) == [.closed])
        }
    }

    // MARK: Completion handlers

    @Test("completion-handler forms report success on the main actor; nil handlers are allowed")
    @MainActor
    func completionHandlers() async throws {
        try await withNote(containing: "x") { _, url, document in
            let opened = await withCheckedContinuation { continuation in
                document.open { ok in
                    MainActor.assertIsolated()
                    continuation.resume(returning: (ok, MainQueueCheck.isMainQueue))
                }
            }
            #expect(opened.0)
            #expect(opened.1, "on the main thread")

            document.edit("y")
            SafeSave.injectFailure(at: .fsync, errno: EIO, forTarget: url)
            let saved = await withCheckedContinuation { continuation in
                document.save(to: url, for: .forOverwriting) { ok in
                    continuation.resume(returning: (ok, MainQueueCheck.isMainQueue))
                }
            }
            #expect(saved.0 == false)
            #expect(saved.1, "on the main thread")
            #expect(document.lastError is DocumentError)
            #expect(document.documentState == .savingError)

            let autosaved = await withCheckedContinuation { continuation in
                document.autosave { continuation.resume(returning: $0) }
            }
            #expect(autosaved)
            #expect(text(at: url) == "y")

            try put("z", at: url)
            let reverted = await withCheckedContinuation { continuation in
                document.revert(toContentsOf: url) { continuation.resume(returning: $0) }
            }
            #expect(reverted)
            #expect(document.text == "z")

            // A nil handler: fire and forget. The async form queued after it waits for it.
            document.edit("w")
            document.close(completionHandler: nil)
            #expect(await document.close(), "closing a closed document succeeds")
            #expect(document.documentState == .closed)
            #expect(text(at: url) == "w", "the nil-handler close saved first")
        }
    }
}
