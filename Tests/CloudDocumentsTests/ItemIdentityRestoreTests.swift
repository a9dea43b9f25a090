import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

/// A document keeps its file one item of the version store, even when another program replaces
/// the file (an atomic write drops the identity attribute) after its folder moved: the next save
/// puts the identity back, and every conflict version of the file stays listed. In the soak of
/// issue 15, lines kept as conflict versions were not listed for the final file.
@Suite("A document's file stays one item of the version store", .timeLimit(.minutes(1 * Polling.deadlineScale)))
@MainActor
struct ItemIdentityRestoreTests {
    @Test func conflictVersionsStayListedAfterAFolderMoveAndAnAtomicRewrite() async throws {
        try await withPrivateVersionStore {
            try await Scratch.with { folder in
                let before = folder.appendingPathComponent("a")
                try FileManager.default.createDirectory(at: before, withIntermediateDirectories: true)
                let url = before.appendingPathComponent("note.txt")
                try put("v1", at: url)
                let document = MoveNoticeNote(fileURL: url)
                try await document.openThrowing()
                try put("theirs 1", at: url)  // another program's change
                document.edit("mine 1")
                try await document.saveThrowing(to: url, for: .forOverwriting)  // conflict version 1

                // The folder moves (coordinated; the document follows), then a program rewrites
                // the file atomically (a new file, without the identity attribute).
                let after = folder.appendingPathComponent("b")
                try await coordinatedMove(before, to: after)
                let moved = after.appendingPathComponent("note.txt")
                while !document.fileURL.isSameFilePath(as: moved) { await Task.yield() }
                try Data("theirs 2".utf8).write(to: moved, options: .atomic)
                document.edit("mine 2")
                try await document.saveThrowing(to: moved, for: .forOverwriting)  // conflict version 2

                let listed = try conflictTexts(of: moved)
                #expect(Set(listed) == ["theirs 1", "theirs 2"], "listed: \(listed)")
                try? await document.closeThrowing()
            }
        }
    }
}
