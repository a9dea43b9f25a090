import Foundation
import Testing
@testable import CloudDocuments

@Suite("FileVersion (NSFileVersion)")
struct FileVersionTests {
    @Test("added versions are listed oldest first; the current version is never among them")
    func addAndList() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "three", in: folder)
            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)
            try addVersion("one", of: item)
            let second = try addVersion("two", of: item)
            #expect(try versionTexts(of: item) == ["one", "two"])
            #expect(second.localizedName == "note.txt")
            #expect(second.localizedNameOfSavingComputer == FileVersion.hostName)
            #expect(second.isConflict == false && second.isResolved && second.hasLocalContents)
            #expect(second.url.path.hasPrefix(folder.path) == false || second.url.path.contains("/store/"))

            let current = try FileVersion.currentVersionOfItem(at: item)
            #expect(current.url == item && current.persistentIdentifier == .current)
            #expect(text(at: current.url) == "three")
            let others = try FileVersion.otherVersionsOfItem(at: item)
            #expect(!others.contains { $0.persistentIdentifier == .current || $0.url == item })
            // Nothing of the store appears in the document folder.
            #expect(listing(folder) == ["note.txt"])
        }
    }

    @Test("a persistent identifier survives JSON and finds the same version from a fresh query")
    func persistentIdentifierRoundTrip() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            let version = try addVersion("before", of: item)
            let json = try JSONEncoder().encode(version.persistentIdentifier)
            let decoded = try JSONDecoder().decode(FileVersion.PersistentIdentifier.self, from: json)
            #expect(decoded == version.persistentIdentifier)
            let found = try #require(try FileVersion.version(itemAt: item, forPersistentIdentifier: decoded))
            #expect(text(at: found.url) == "before")
            #expect(found.modificationDate == version.modificationDate)
            let unknown = FileVersion.PersistentIdentifier(rawValue: UUID().uuidString)
            #expect(try FileVersion.version(itemAt: item, forPersistentIdentifier: unknown) == nil)
            let current = try FileVersion.version(itemAt: item, forPersistentIdentifier: .current)
            #expect(current?.url == item)
        }
    }

    @Test("replaceItem restores a version's bytes; with .byMoving the version is gone afterwards")
    func replaceItemRestores() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "new text", in: folder)
            let old = try addVersion("old text", of: item)
            let result = try old.replaceItem(at: item)
            #expect(result == item)
            #expect(text(at: item) == "old text")
            #expect(try versionTexts(of: item) == ["old text"])  // Copying keeps the version.
            #expect(listing(folder) == ["note.txt"])             // No temporary item left.

            try put("newer", at: item)
            let moved = try #require(try FileVersion.otherVersionsOfItem(at: item).first)
            _ = try moved.replaceItem(at: item, options: .byMoving)
            #expect(text(at: item) == "old text")
            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)
            #expect(!moved.hasLocalContents)
        }
    }

    @Test("resolving a conflict version removes it from the unresolved conflicts, durably")
    func resolveConflict() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "mine", in: folder)
            try addVersion("plain", of: item)
            let conflict = try addVersion("theirs", of: item, conflict: true)
            #expect(conflict.isConflict && !conflict.isResolved)
            #expect(conflict.localizedNameOfSavingComputer == "other-laptop")
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: item).map(\.persistentIdentifier)
                    == [conflict.persistentIdentifier])

            conflict.isResolved = false  // false → true only: no effect.
            #expect(!conflict.isResolved)
            conflict.isResolved = true
            #expect(conflict.isResolved)
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: item).isEmpty)
            let reread = try #require(try FileVersion.version(itemAt: item, forPersistentIdentifier: conflict.persistentIdentifier))
            #expect(reread.isConflict && reread.isResolved)
        }
    }

    @Test("remove() removes one version; removeOtherVersionsOfItem removes all; the current cannot be removed")
    func removing() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            let first = try addVersion("a", of: item)
            try addVersion("b", of: item)
            try addVersion("c", of: item, conflict: true)
            try first.remove()
            #expect(try versionTexts(of: item) == ["b", "c"])
            #expect(throws: FileVersionError.self) { try first.remove() }
            let current = try FileVersion.currentVersionOfItem(at: item)
            #expect(throws: FileVersionError.isCurrentVersion(item)) { try current.remove() }

            try FileVersion.removeOtherVersionsOfItem(at: item)
            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)
            #expect(text(at: item) == "now")
        }
    }

    @Test("addOfItem with .byMoving takes the contents from temporaryDirectoryURLForNewVersionOfItem")
    func addByMoving() throws {
        try withVersionStore { folder, store in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            let temporary = try FileVersion.temporaryDirectoryURLForNewVersionOfItem(at: item)
            #expect(temporary.path.hasPrefix(store.root))
            let contents = temporary.appendingPathComponent("draft.txt")
            try put("draft", at: contents)
            let version = try FileVersion.addOfItem(at: item, withContentsOf: contents, options: .byMoving)
            #expect(!FileManager.default.fileExists(atPath: contents.path))
            #expect(text(at: version.url) == "draft")
        }
    }

    @Test("missing items and contents throw clear errors")
    func errors() throws {
        try withVersionStore { folder, _ in
            let missing = folder.appendingPathComponent("missing.txt")
            #expect(throws: FileVersionError.itemNotFound(missing)) { try FileVersion.currentVersionOfItem(at: missing) }
            let item = try makeFile("note.txt", containing: "now", in: folder)
            let nowhere = folder.appendingPathComponent("nowhere")
            #expect(throws: FileVersionError.contentsNotFound(nowhere)) {
                try FileVersion.addOfItem(at: item, withContentsOf: nowhere)
            }
            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)
        }
    }
}

@Suite("FileVersion: names that are not UTF-8")
struct FileVersionRawNameTests {
    @Test("an item whose name is not valid UTF-8 keeps its versions and is restored byte for byte")
    func rawName() throws {
        try withVersionStore { folder, _ in
            let name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)  // Latin-1 é
            #expect(writeRaw(in: folder, name, "current"))
            let item = rawNameURL(in: folder, name)
            let contents = folder.deletingLastPathComponent().appendingPathComponent("old.txt")
            try put("old", at: contents)
            let version = try FileVersion.addOfItem(at: item, withContentsOf: contents)
            #expect(try FileVersion.otherVersionsOfItem(at: item).count == 1)
            _ = try version.replaceItem(at: item)
            #expect(readRaw(in: folder, name) == "old")
            #expect(rawListing(folder) == [name])
        }
    }
}
