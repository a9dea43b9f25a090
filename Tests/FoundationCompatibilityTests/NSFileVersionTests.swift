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

/// The identifier text of `version`'s `persistentIdentifier`.
private func identifier(_ version: NSFileVersion) -> String? {
    (version.persistentIdentifier as? NSString).map { String($0) }
}

@Suite("NSFilePresenter version messages")
struct NSFilePresenterVersionMessageTests {
    @Test("a presenter hears gain, resolve and lose with the right NSFileVersion")
    func gainResolveLose() throws {
        try withDocument { url in
            let watcher = ConflictBadgeWatcher(url: url)
            NSFileCoordinator.addFilePresenter(watcher)
            defer { NSFileCoordinator.removeFilePresenter(watcher) }
            let wait = { #expect(watcher.arrived.wait(timeout: .now() + 30) == .success) }

            // Each step waits for its message, so the version is looked up before the next change.
            let snapshot = try NSFileVersion.addOfItem(at: url, withContentsOf: url)
            wait()
            try addConflict("theirs\n", of: url, from: "laptop")
            wait()
            let conflict = try #require(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.first)
            conflict.isResolved = true
            wait()
            try conflict.remove()
            wait()
            try snapshot.remove()
            wait()

            let messages = watcher.messages
            try #require(messages.count == 5)
            #expect(messages.map(\.kind) == ["gain", "gain", "resolve", "lose", "lose"])

            // The snapshot: gained, later lost.
            #expect(messages[0].url == snapshot.url)
            #expect(messages[0].persistentIdentifier == identifier(snapshot))
            #expect(!messages[0].isConflict && messages[0].isResolved && messages[0].hasLocalContents)
            #expect(messages[4].url == snapshot.url)
            #expect(messages[4].persistentIdentifier == identifier(snapshot))
            #expect(!messages[4].isConflict && !messages[4].hasLocalContents)

            // The conflict: gained unresolved, with its saving computer (looked up in the store) …
            #expect(messages[1].url == conflict.url)
            #expect(messages[1].persistentIdentifier == identifier(conflict))
            #expect(messages[1].isConflict && !messages[1].isResolved)
            #expect(messages[1].savingComputer == "laptop")
            #expect(messages[1].hasLocalContents)
            // … resolved …
            #expect(messages[2].url == conflict.url)
            #expect(messages[2].persistentIdentifier == identifier(conflict))
            #expect(messages[2].isConflict && messages[2].isResolved)
            #expect(messages[2].savingComputer == "laptop")
            // … and lost: gone from the store, described by the message.
            #expect(messages[3].url == conflict.url)
            #expect(messages[3].persistentIdentifier == identifier(conflict))
            #expect(messages[3].isConflict && messages[3].isResolved && !messages[3].hasLocalContents)
            #expect(messages[3].savingComputer == nil)
        }
    }

    @Test("the NSFileVersion of a gain can be used, and that of a loss says it is gone the Cocoa way")
    func usingTheVersionsTold() throws {
        try withDocument { url in
            let watcher = ConflictBadgeWatcher(url: url)
            NSFileCoordinator.addFilePresenter(watcher)
            defer { NSFileCoordinator.removeFilePresenter(watcher) }

            try addConflict("theirs\n", of: url, from: "laptop")
            #expect(watcher.arrived.wait(timeout: .now() + 30) == .success)
            let gained = try #require(watcher.versions.first)
            #expect(text(gained.url) == "theirs\n")
            _ = try gained.replaceItem(at: url, options: [])
            #expect(text(url) == "theirs\n")

            try NSFileVersion.removeOtherVersionsOfItem(at: url)
            #expect(watcher.arrived.wait(timeout: .now() + 30) == .success)
            let lost = try #require(watcher.versions.last)
            #expect(watcher.messages.last?.kind == "lose")
            #expect(identifier(lost) == identifier(gained))
            #expect(lost.localizedName == "doc.txt")
            #expect(lost.modificationDate == nil)
            #expect(VersionKeeper.delete(lost)?.domain == NSCocoaErrorDomain)
            #expect(VersionKeeper.delete(lost)?.code == NSFileNoSuchFileError)
            lost.isResolved = true   // nothing to resolve: ignored, as on Apple platforms
            #expect(NSFileVersion.otherVersionsOfItem(at: url)?.isEmpty == true)
        }
    }
}
