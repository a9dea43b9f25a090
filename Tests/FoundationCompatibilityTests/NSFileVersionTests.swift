import Foundation
import FoundationCompatibility
import Testing
@testable import CloudDocuments

/// Runs `body` with a fresh folder holding `doc.txt` (with `text`) and a private version store.
private func withDocument(_ text: String = "current\n", _ body: (URL) throws -> Void) throws {
    let scratch = try Scratch()
    let store = VersionStore(root: scratch.url.appendingPathComponent("store").path)
    let documents = scratch.url.appendingPathComponent("documents", isDirectory: true)
    try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
    let url = documents.appendingPathComponent("doc.txt")
    try Data(text.utf8).write(to: url)
    try VersionStore.$override.withValue(store) { try body(url) }
}

/// Adds `text` as an unresolved conflict version of `url`, as a save that found the file changed
/// (or a sync tool's conflict copy) does.
private func addConflict(_ text: String, of url: URL, from computer: String) throws {
    let contents = url.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("conflict-\(UUID().uuidString)")
    try Data(text.utf8).write(to: contents)
    defer { try? FileManager.default.removeItem(at: contents) }
    _ = try FileVersion.addVersion(ofItemAt: url, withContentsOf: contents, byMoving: false, isConflict: true,
                                   savingComputer: computer, coordinator: nil)
}

private func text(_ url: URL) -> String? { try? String(contentsOf: url, encoding: .utf8) }

@Suite("NSFileVersion: Apple's version API over FileVersion")
struct NSFileVersionTests {
    @Test("the current version is the item; other versions never include it; nil for no item")
    func currentAndOthers() throws {
        try withDocument { url in
            let current = try #require(NSFileVersion.currentVersionOfItem(at: url))
            #expect(current.url == url)
            #expect(current.localizedName == "doc.txt")
            #expect(current.localizedNameOfSavingComputer == nil)
            #expect(!current.isConflict && current.isResolved && current.hasLocalContents)
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty == true)
            #expect(NSFileVersion.currentVersionOfItem(at: url.appendingPathExtension("missing")) == nil)
        }
    }

    @Test("a snapshot's archived identifier finds the version again and restores it")
    func snapshotAndRestore() throws {
        try withDocument("first draft\n") { url in
            let archived = try VersionKeeper.snapshot(url)
            try Data("rewritten\n".utf8).write(to: url)
            let others = try #require(NSFileVersion.otherVersionsOfItem(at: url))
            #expect(others.count == 1)
            #expect(others.first.map { text($0.url) } == "first draft\n")
            #expect(others.first?.isConflict == false)
            #expect(try VersionKeeper.restore(url, from: archived))
            #expect(text(url) == "first draft\n")

            try NSFileVersion.removeOtherVersionsOfItem(at: url)
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
            #expect(try !VersionKeeper.restore(url, from: archived))
        }
    }

    @Test("a version written in the temporary folder is added by moving it")
    func temporaryFolderByMoving() throws {
        try withDocument { url in
            let version = try VersionKeeper.addVersion(of: url, holding: Data("from the temporary folder\n".utf8))
            #expect(text(version.url) == "from the temporary folder\n")
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.count == 1)
            #expect(text(url) == "current\n")
        }
    }

    @Test("keep current: conflicts are resolved, then removed; the file is untouched")
    func keepCurrent() throws {
        try withDocument { url in
            try addConflict("theirs\n", of: url, from: "laptop")
            let conflicts = try #require(NSFileVersion.unresolvedConflictVersionsOfItem(at: url))
            #expect(conflicts.count == 1)
            #expect(conflicts.first?.isConflict == true)
            #expect(conflicts.first?.isResolved == false)
            #expect(conflicts.first?.localizedNameOfSavingComputer == "laptop")

            try VersionKeeper.keepCurrent(url)
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty == true)
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
            #expect(conflicts.first?.hasLocalContents == false)
            #expect(text(url) == "current\n")
        }
    }

    @Test("resolving through isResolved is durable and cannot be undone")
    func resolvedIsDurable() throws {
        try withDocument { url in
            try addConflict("theirs\n", of: url, from: "laptop")
            let conflict = try #require(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.first)
            conflict.isResolved = true
            conflict.isResolved = false
            #expect(conflict.isResolved)
            let again = try #require(NSFileVersion.otherVersionsOfItem(at: url)?.first)
            #expect(again.isConflict && again.isResolved)
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty == true)
        }
    }

    @Test("newest wins: a newer conflict version replaces the item through replaceItem")
    func keepNewest() throws {
        try withDocument { url in
            // The item is older than the conflict.
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)],
                                                  ofItemAtPath: url.path)
            try addConflict("newer, from the laptop\n", of: url, from: "laptop")
            try VersionKeeper.keepNewest(url)
            #expect(text(url) == "newer, from the laptop\n")
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
        }
    }

    @Test("errors are NSErrors in Cocoa's domain with Cocoa's codes")
    func errors() throws {
        try withDocument { url in
            let current = try #require(NSFileVersion.currentVersionOfItem(at: url))
            #expect(VersionKeeper.delete(current)?.domain == NSCocoaErrorDomain)
            #expect(VersionKeeper.delete(current)?.code == NSFeatureUnsupportedError)

            let version = try NSFileVersion.addOfItem(at: url, withContentsOf: url)
            #expect(VersionKeeper.delete(version) == nil)
            #expect(VersionKeeper.delete(version)?.code == NSFileNoSuchFileError)

            let missing = url.deletingLastPathComponent().appendingPathComponent("missing.txt")
            do {
                _ = try NSFileVersion.addOfItem(at: url, withContentsOf: missing)
                Issue.record("adding missing contents succeeded")
            } catch let error as NSError {
                #expect(error.domain == NSCocoaErrorDomain)
                #expect(error.code == NSFileReadNoSuchFileError)
                #expect(error.userInfo[NSFilePathErrorKey] as? String == missing.path)
                #expect(error.userInfo[NSUnderlyingErrorKey] is FileVersionError)
            }
            #expect(NSFileVersion.version(itemAt: url, forPersistentIdentifier: 42) == nil)
            #expect(NSFileVersion.version(itemAt: url, forPersistentIdentifier: "not-a-version") == nil)
        }
    }
}
