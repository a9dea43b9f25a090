import FileCoordination
import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

// Apple's recipe changes an item's versions "from a block passed to a file coordinator": resolving
// and removing versions inside a coordinated write of the item must work — joining that write —
// as well as outside it, for stored versions and for sync tools' conflict copies.

/// The writing options Apple's recipes use around version changes.
private let recipeOptions: [Coordinator.WritingOptions] = [.forDeleting, [], .forReplacing]

/// A Syncthing conflict copy's name for `doc.txt`.
private let syncthingCopy = "doc.sync-conflict-20261123-051644-SUBNBV7.txt"

@Suite("Versions changed inside a coordinated write of their item", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct VersionsInsideCoordinationTests {
    @Test("stored versions: isResolved = true and removeOtherVersionsOfItem work inside the write", arguments: recipeOptions)
    func storedVersionsInsideWrite(options: Coordinator.WritingOptions) throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            try addVersion("theirs", of: doc, conflict: true)
            try addVersion("older", of: doc)
            try Coordinator().coordinate(writingItemAt: doc, options: options) { url in
                let conflicts = try FileVersion.unresolvedConflictVersionsOfItem(at: url)
                #expect(conflicts.count == 1)
                conflicts.first?.isResolved = true
                #expect(conflicts.first?.isResolved == true)
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: url).isEmpty)
                #expect(try FileVersion.otherVersionsOfItem(at: url).count == 2)
                try FileVersion.removeOtherVersionsOfItem(at: url)
                #expect(try FileVersion.otherVersionsOfItem(at: url).isEmpty)
            }
            #expect(try FileVersion.otherVersionsOfItem(at: doc).isEmpty)
            #expect(text(at: doc) == "current")
        }
    }

    @Test("conflict copies: resolving deletes the copy, removeOtherVersionsOfItem deletes them all, inside the write",
          arguments: recipeOptions)
    func conflictCopiesInsideWrite(options: Coordinator.WritingOptions) throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            let resolved = try makeFile(syncthingCopy, containing: "theirs", in: folder)
            let removed = try makeFile("doc (conflicted copy alice 2026-11-23 051644).txt", containing: "alice's", in: folder)
            try Coordinator().coordinate(writingItemAt: doc, options: options) { url in
                let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first { $0.url == resolved })
                version.isResolved = true
                #expect(version.isResolved)
                #expect(!FileManager.default.fileExists(atPath: resolved.path), "the copy is deleted, so the tool carries it")
                try FileVersion.removeOtherVersionsOfItem(at: url)
            }
            #expect(!FileManager.default.fileExists(atPath: removed.path))
            #expect(listing(folder) == ["doc.txt"])
            #expect(text(at: doc) == "current")
        }
    }

    @Test("resolve(), remove(), addOfItem and replaceItem inside the write; presenters hear the version messages")
    func everyChangeInsideWrite() throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            _ = try makeFile(syncthingCopy, containing: "copy", in: folder)
            let stored = try addVersion("theirs", of: doc, conflict: true)
            let presenter = VersionMessageRecorder(doc, includingChanges: false)
            Coordinator.addFilePresenter(presenter)
            defer { Coordinator.removeFilePresenter(presenter) }
            let contents = folder.deletingLastPathComponent().appendingPathComponent("added.txt")
            try put("added", at: contents)

            try Coordinator().coordinate(writingItemAt: doc) { url in
                try stored.resolve()
                let copy = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: url).first)
                try copy.replaceItem(at: url)
                #expect(text(at: url) == "copy")
                try copy.remove()
                let added = try FileVersion.addOfItem(at: url, withContentsOf: contents)
                try added.replaceItem(at: url)
                #expect(text(at: url) == "added")
                try added.setDiscardable(true)
            }
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).isEmpty)
            #expect(try FileVersion.otherVersionsOfItem(at: doc).map { text(at: $0.url) } == ["theirs", "added"])
            #expect(listing(folder) == ["doc.txt"])
            presenter.presentedItemOperationQueue.waitUntilAllOperationsAreFinished()
            let messages = presenter.messages.withLock { $0 }
            // (Restoring a version and marking it discardable send no version message.)
            #expect(messages.count == 3, "\(messages)")
            #expect(messages.first == "resolve \(stored.persistentIdentifier.rawValue)")
            #expect(messages.dropFirst().first == "lose \(copyIdentifier(syncthingCopy))")
            #expect(messages.last?.hasPrefix("gain ") == true)
        }
    }

    @Test("inside the async coordination (a Task), and inside a folder's .forDeleting write")
    func asyncAndFolderDelete() async throws {
        try await withPrivateVersionStore {
            let folderScratch = try Scratch("clouddocs-inside")
            defer { folderScratch.remove() }
            let folder = folderScratch.url
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            try addVersion("theirs", of: doc, conflict: true)
            _ = try makeFile(syncthingCopy, containing: "copy", in: folder)
            let intent = FileAccessIntent.writingIntent(with: doc, options: .forDeleting)
            // The accessor runs on a thread of its own, which the task-local store does not reach.
            let store = try #require(VersionStore.override)
            try await Coordinator().coordinate(with: [intent]) { intents in
                try VersionStore.$override.withValue(store) {
                    for version in try FileVersion.unresolvedConflictVersionsOfItem(at: intents[0].url) { version.isResolved = true }
                }
            }
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).isEmpty)
            #expect(listing(folder) == ["doc.txt"])

            // The item inside a folder being deleted: the folder's write covers it.
            try addVersion("older", of: doc)
            try Coordinator().coordinate(writingItemAt: folder, options: .forDeleting) { url in
                try FileVersion.removeOtherVersionsOfItem(at: url.appendingPathComponent("doc.txt"))
                try FileManager.default.removeItem(at: url)
            }
            #expect(!FileManager.default.fileExists(atPath: folder.path))
        }
    }

    @Test("a setter that cannot resolve reports it and keeps the value (never silence)")
    func setterFailureIsReported() throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            let copy = try makeFile(syncthingCopy, containing: "theirs", in: folder)
            let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).first)
            try FileManager.default.removeItem(at: copy)  // gone under it: nothing can be resolved
            let before = FileVersion.setterFailureCount
            version.isResolved = true
            #expect(!version.isResolved)
            #expect(FileVersion.setterFailureCount > before, "reported (a line on standard error)")
            #expect(throws: FileVersionError.versionNotFound(copy)) { try version.resolve() }
        }
    }

    @Test("another coordinator's access of the item is not joined: a reader on another thread still waits for it")
    func onlyTheCallingThreadsAccessIsJoined() throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            let conflict = try addVersion("theirs", of: doc, conflict: true)
            let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            let holder = Thread {
                try? Coordinator().coordinate(writingItemAt: doc) { _ in
                    inside.signal()
                    _ = release.wait(timeout: Polling.deadline())
                }
                done.signal()
            }
            holder.start()
            #expect(inside.wait(timeout: Polling.deadline()) == .success)
            // A thread that runs no accessor: its change waits for the holder (seen waiting for
            // the lock, then cancelled — the holder is still inside).
            #expect(contend { try conflict.resolve(coordinator: $0) } == .waited)
            #expect(!conflict.isResolved)
            release.signal()
            #expect(done.wait(timeout: Polling.deadline()) == .success)
            try conflict.resolve()
            #expect(conflict.isResolved)
        }
    }
}
