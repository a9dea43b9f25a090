import Foundation
import FoundationCompatibility
import Testing
@testable import CloudDocuments

// Apple's recipe, as apps for Apple platforms write it (SwiftCloudDrive's `resolveConflicts`): a
// presenter resolves conflicts with `removeOtherVersionsOfItem(at:)` "from a block passed to a
// file coordinator" (a `.forDeleting` write), then marks the conflicts resolved.

/// A folder presenter that resolves the conflicts of an item the Apple way.
private final class ConflictResolvingPresenter: NSObject, NSFilePresenter, @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()

    init(folder: URL) { presentedItemURL = folder }

    /// Keeps the current contents of `url`: removes every other version inside a coordinated
    /// delete-write, then resolves what is left. Throws what the coordinator or versions report.
    func resolveConflicts(for url: URL) throws {
        let coordinator = NSFileCoordinator(filePresenter: self)
        var coordinatorError: NSError?
        var versionError: (any Error)?
        coordinator.coordinate(writingItemAt: url, options: .forDeleting, error: &coordinatorError) { newURL in
            do {
                try NSFileVersion.removeOtherVersionsOfItem(at: newURL)
            } catch {
                versionError = error
            }
        }
        if let versionError { throw versionError }
        if let coordinatorError { throw coordinatorError }
        NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.forEach { $0.isResolved = true }
    }
}

/// Runs `body` with a fresh folder holding `doc.txt` and a private version store.
private func withDocumentFolder(_ body: (_ folder: URL, _ doc: URL) throws -> Void) throws {
    let scratch = try Scratch()
    let store = VersionStore(root: scratch.url.appendingPathComponent("store").path)
    let folder = scratch.url.appendingPathComponent("documents", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let doc = folder.appendingPathComponent("doc.txt")
    try Data("current\n".utf8).write(to: doc)
    try VersionStore.$override.withValue(store) { try body(folder, doc) }
}

/// Adds `text` as an unresolved conflict version of `url` (as a save that found the file changed does).
private func addStoredConflict(_ text: String, of url: URL) throws {
    let contents = url.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("c-\(UUID().uuidString)")
    try Data(text.utf8).write(to: contents)
    defer { try? FileManager.default.removeItem(at: contents) }
    _ = try FileVersion.addVersion(ofItemAt: url, withContentsOf: contents, byMoving: false, isConflict: true,
                                   savingComputer: "laptop", coordinator: nil)
}

private let syncthingCopy = "doc.sync-conflict-20261123-051644-SUBNBV7.txt"

private func names(in folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
}

@Suite("NSFileVersion inside an NSFileCoordinator write (Apple's recipe)")
struct NSFileVersionInsideCoordinationTests {
    @Test("removeOtherVersionsOfItem inside a .forDeleting write: stored versions and conflict copies are gone")
    func removeInsideDeletingWrite() throws {
        try withDocumentFolder { folder, doc in
            try addStoredConflict("theirs\n", of: doc)
            _ = try NSFileVersion.addOfItem(at: doc, withContentsOf: doc)
            try Data("copy\n".utf8).write(to: folder.appendingPathComponent(syncthingCopy))
            let presenter = ConflictResolvingPresenter(folder: folder)
            NSFileCoordinator.addFilePresenter(presenter)
            defer { NSFileCoordinator.removeFilePresenter(presenter) }

            try presenter.resolveConflicts(for: doc)
            #expect(NSFileVersion.otherVersionsOfItem(at: doc)?.isEmpty == true)
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: doc)?.isEmpty == true)
            #expect(names(in: folder) == ["doc.txt"], "the conflict copy is deleted, so the sync tool carries it")
            #expect(contents(of: doc) == "current\n")
        }
    }

    @Test("isResolved = true inside a write (plain and .forDeleting): stored conflicts and conflict copies",
          arguments: [NSFileCoordinator.WritingOptions.forDeleting, []])
    func resolveInsideWrite(options: NSFileCoordinator.WritingOptions) throws {
        try withDocumentFolder { folder, doc in
            try addStoredConflict("theirs\n", of: doc)
            try Data("copy\n".utf8).write(to: folder.appendingPathComponent(syncthingCopy))
            var error: NSError?
            var seen = 0, resolved = 0
            NSFileCoordinator(filePresenter: nil).coordinate(writingItemAt: doc, options: options, error: &error) { url in
                let conflicts = NSFileVersion.unresolvedConflictVersionsOfItem(at: url) ?? []
                seen = conflicts.count
                for conflict in conflicts { conflict.isResolved = true }
                resolved = conflicts.filter(\.isResolved).count
            }
            #expect(error == nil)
            #expect(seen == 2 && resolved == 2)
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: doc)?.isEmpty == true)
            #expect(NSFileVersion.otherVersionsOfItem(at: doc)?.count == 1, "the stored one stays, resolved")
            #expect(names(in: folder) == ["doc.txt"])
        }
    }

    @Test("remove() and removeOtherVersionsOfItem outside any coordination still work")
    func outsideCoordination() throws {
        try withDocumentFolder { folder, doc in
            try addStoredConflict("theirs\n", of: doc)
            try Data("copy\n".utf8).write(to: folder.appendingPathComponent(syncthingCopy))
            let copy = try #require(NSFileVersion.unresolvedConflictVersionsOfItem(at: doc)?.first { $0.url.lastPathComponent == syncthingCopy })
            try copy.remove()
            try NSFileVersion.removeOtherVersionsOfItem(at: doc)
            #expect(NSFileVersion.otherVersionsOfItem(at: doc)?.isEmpty == true)
            #expect(names(in: folder) == ["doc.txt"])
        }
    }
}
