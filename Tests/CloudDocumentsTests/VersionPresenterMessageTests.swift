import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import CloudDocuments

@Suite("Version messages to presenters", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct VersionPresenterMessageTests {
    @Test("gain, resolve and lose reach every presenter of the item, the changing coordinator's own included")
    func messagesReachEveryPresenter() async throws {
        try await withPrivateVersionStore {
            let folderScratch = try Scratch("clouddocs-vmsg")
            defer { folderScratch.remove() }
            let folder = folderScratch.url
            let url = folder.appendingPathComponent("item.txt")
            try put("current", at: url)
            let other = VersionMessageRecorder(url, includingChanges: false), own = VersionMessageRecorder(url, includingChanges: false)
            Coordinator.addFilePresenter(other)
            Coordinator.addFilePresenter(own)
            defer {
                Coordinator.removeFilePresenter(other)
                Coordinator.removeFilePresenter(own)
            }
            let contents = folder.appendingPathComponent("contents")
            try put("theirs", at: contents)
            let coordinator = Coordinator(filePresenter: own)
            let version = try FileVersion.addVersion(ofItemAt: url, withContentsOf: contents, byMoving: false,
                                                     isConflict: true, savingComputer: nil, coordinator: coordinator)
            try version.resolve(coordinator: coordinator)
            try version.remove(coordinator: coordinator)
            let id = version.persistentIdentifier.rawValue
            for presenter in [other, own] {
                #expect(try await presenter.wait(for: 3))
                #expect(presenter.messages.withLock { $0 } == ["gain \(id)", "resolve \(id)", "lose \(id)"])
                #expect(presenter.onOwnQueue.withLock { $0 })
            }
        }
    }

    @Test("a document's save that keeps a conflict version tells the other presenters of the file")
    func documentConflictIsAnnounced() async throws {
        try await withPrivateVersionStore {
            try await withOpenNote(containing: "original") { _, url, document in
                let other = VersionMessageRecorder(url, includingChanges: false)
                Coordinator.addFilePresenter(other)
                defer { Coordinator.removeFilePresenter(other) }
                document.edit("mine")
                try put("theirs", at: url)
                try await document.saveThrowing(to: url, for: .forOverwriting)
                #expect(try await other.wait(for: 1))
                let conflict = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first)
                #expect(other.messages.withLock { $0 } == ["gain \(conflict.persistentIdentifier.rawValue)"])
                try await document.closeThrowing()
            }
        }
    }
}
