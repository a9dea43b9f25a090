import FileCoordination
import Foundation
import TestSupport
import Testing
@testable import CloudDocuments

/// Runs `body` with a private version store bound for this task (documents made inside keep it:
/// see `CloudDocument.versionStoreOverride`), removed afterwards.
func withPrivateVersionStore<Result>(isolation: isolated (any Actor)? = #isolation,
                                     _ body: () async throws -> Result) async throws -> Result {
    let rootScratch = try Scratch("clouddocs-versions")
    defer { rootScratch.remove() }
    let root = rootScratch.url
    let store = VersionStore(root: root.appendingPathComponent("store").path)
    return try await VersionStore.$override.withValue(store, operation: body, isolation: isolation)
}

/// The texts of the unresolved conflict versions of `url`, oldest first.
func conflictTexts(of url: URL) throws -> [String?] {
    try FileVersion.unresolvedConflictVersionsOfItem(at: url).map { text(at: $0.url) }
}

@Suite("A save over a changed file keeps it as a conflict version", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct DocumentConflictTests {
    @Test("an uncoordinated write between open and save → conflict version, .inConflict; resolving clears it")
    func uncoordinatedWriteBecomesConflict() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "original") { _, url, document in
                let recorder = StateRecorder(document)
                var stream = StateStream(document)
                document.edit("mine, unsaved")
                try put("theirs, written without coordinating", at: url)   // plain write(2)
                try await document.saveThrowing(to: url, for: .forOverwriting)

                #expect(text(at: url) == "mine, unsaved")
                #expect(try conflictTexts(of: url) == ["theirs, written without coordinating"])
                let conflict = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first)
                #expect(conflict.isConflict && !conflict.isResolved)
                #expect(await stream.until { $0.contains(.inConflict) } == [.inConflict])
                #expect(document.documentState == .inConflict)
                await drainDocumentQueue(document)
                #expect(recorder.recorded == [.inConflict])
                #expect(recorder.postedOnMainThread)

                // Resolving the only conflict version clears .inConflict.
                // (The resolution's coordinated write disables editing for a moment.)
                try conflict.resolve()
                let afterResolving = await stream.until { $0 == .normal }
                #expect(afterResolving.allSatisfy { $0.isSubset(of: [.inConflict, .editingDisabled]) })
                #expect(document.documentState == .normal)
                #expect(try conflictTexts(of: url) == [])
                // The resolved version stays among the other versions until removed.
                #expect(try versionTexts(of: url) == ["theirs, written without coordinating"])
                try await document.closeThrowing()
            }
        }
    }

    @Test("a coordinated write by another process while the document has unsaved changes → conflict version")
    func otherProcessWriteBecomesConflict() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "original") { _, url, document in
                var stream = StateStream(document)
                document.edit("my unsaved edit")
                let child = try ChildProcess(["queue-write", url.path, "the other process's text"])
                #expect(child.readLine() == "STARTING")
                #expect(child.readLine() == "WROTE")
                child.waitForExit()
                #expect(document.hasUnsavedChanges)

                try await document.saveThrowing(to: url, for: .forOverwriting)
                #expect(text(at: url) == "my unsaved edit")
                #expect(try conflictTexts(of: url) == ["the other process's text"])
                #expect(await stream.until { $0.contains(.inConflict) }.last == .inConflict)

                // Removing the conflict version clears .inConflict too.
                try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first).remove()
                #expect(await stream.until { $0 == .normal }.last == .normal)
                #expect(document.documentState == .normal)
                try await document.closeThrowing()
            }
        }
    }

    @Test("no change on disk between saves → no conflict version, no .inConflict")
    func unchangedFileKeepsNoVersion() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "original") { _, url, document in
                let recorder = StateRecorder(document)
                for text in ["one", "two", "three"] {
                    document.edit(text)
                    try await document.saveThrowing(to: url, for: .forOverwriting)
                }
                #expect(text(at: url) == "three")
                #expect(try FileVersion.otherVersionsOfItem(at: url).isEmpty)
                await drainDocumentQueue(document)
                #expect(!recorder.recorded.contains { $0.contains(.inConflict) })
                #expect(document.documentState == .normal)
                try await document.closeThrowing()
            }
        }
    }

    @Test("preservesVersions keeps the previous contents on each save: N saves, N versions")
    func preservesVersionsKeepsOnePerSave() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "v0") { _, url, document in
                #expect(!document.preservesVersions)
                document.preservesVersions = true
                for n in 1...4 {
                    document.edit("v\(n)")
                    try await document.saveThrowing(to: url, for: .forOverwriting)
                }
                #expect(text(at: url) == "v4")
                #expect(try versionTexts(of: url) == ["v0", "v1", "v2", "v3"])
                #expect(try FileVersion.otherVersionsOfItem(at: url).allSatisfy { !$0.isConflict })
                #expect(document.documentState == .normal)
                try await document.closeThrowing()
            }
        }
    }

    @Test("opening a file with an unresolved conflict version → .inConflict at once")
    func openSeesExistingConflict() async throws {
        try await withPrivateVersionStore {
            try await withNote(containing: "current") { _, url, document in
                try addVersion("theirs", of: url, conflict: true)
                try await document.openThrowing()
                #expect(document.documentState == .inConflict)
                var stream = StateStream(document)
                try FileVersion.removeOtherVersionsOfItem(at: url)
                #expect(await stream.until { $0 == .normal }.last == .normal)
                try await document.closeThrowing()
            }
        }
    }

    @Test("the conflict version cannot be kept → the save fails and the other writer's file is untouched")
    func unusableStoreFailsTheSave() async throws {
        let blockerScratch = try Scratch("clouddocs-nostore")
        defer { blockerScratch.remove() }
        let blocker = blockerScratch.url
        let file = blocker.appendingPathComponent("a-file")
        try put("not a folder", at: file)
        // The store's root is below a regular file: every attempt to create it fails (ENOTDIR).
        let store = VersionStore(root: file.appendingPathComponent("store").path)
        try await VersionStore.$override.withValue(store) {
            try await withOpenNote(containing: "original") { _, url, document in
                document.edit("mine")
                try put("theirs", at: url)
                await #expect(throws: DocumentError.self) {
                    try await document.saveThrowing(to: url, for: .forOverwriting)
                }
                #expect(text(at: url) == "theirs")
                #expect(document.hasUnsavedChanges)
                #expect(document.documentState.contains(.savingError))
                #expect(!document.documentState.contains(.inConflict))
                try? await document.closeThrowing()
            }
        }
    }

    @Test("resolveConflict can merge instead: no conflict version, the merged contents are written")
    func hookMerges() async throws {
        try await withPrivateVersionStore {
            let folderScratch = try Scratch("clouddocs-merge")
            defer { folderScratch.remove() }
            let folder = folderScratch.url
            let url = folder.appendingPathComponent("note.txt")
            try put("base", at: url)
            let document = MergingNote(fileURL: url)
            try await document.openThrowing()
            await document.edit("mine")
            try put("theirs", at: url)
            try await document.saveThrowing(to: url, for: .forOverwriting)
            #expect(text(at: url) == "theirs+mine")
            #expect(await document.text == "theirs+mine")
            #expect(try FileVersion.otherVersionsOfItem(at: url).isEmpty)
            #expect(document.documentState == .normal)
            try await document.closeThrowing()
        }
    }
}

/// A note that merges by appending its own text to the file's, and takes the merge as its text.
final class MergingNote: EditableNote {
    override func resolveConflict(withCurrentContentsAt url: URL, ofType typeName: String,
                                  saving contents: DocumentContents) throws -> DocumentContents? {
        MainActor.assertIsolated()
        text = (CloudDocumentsTests.text(at: url) ?? "") + "+" + text
        return .data(Data(text.utf8))
    }
}
