import FileCoordination
import Foundation
import Glibc
import TestSupport
import Testing
@testable import CloudDocuments

// Sync tools' conflict copies as conflict versions: the queries, the identifiers, resolving,
// removing and replacing (Docs/Versions.md, "Conflict copies of sync tools").

/// The identifier of the conflict version for the copy named `name`.
func copyIdentifier(_ name: String) -> String { "conflict-copy:" + name }

/// Sets the modification time of `url`.
func setModificationDate(_ date: Date, of url: URL) throws {
    try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: url.path)
}

@Suite("Conflict copies of sync tools are conflict versions", .timeLimit(.minutes(1 * Polling.deadlineScale)))
struct ConflictCopyVersionTests {
    /// One copy of `doc.txt` per tool and scheme, with the saving computer its name carries.
    static let copiesOfDoc: [(name: String, savingComputer: String?)] = [
        ("doc.sync-conflict-20261123-051644-SUBNBV7.txt", nil),                  // Syncthing: the ID is the winner's
        ("doc (conflicted copy alice 2026-11-23 051644).txt", "alice"),          // Nextcloud ≥ 2.5
        ("doc_conflict_bob-20261123-051644.txt", "bob"),                          // older Nextcloud/ownCloud
        ("doc (Alice Smith's conflicted copy 2026-11-23).txt", "Alice Smith"),   // Dropbox
        ("doc-laptop-safeBackup-0001.txt", "laptop"),                             // OneDrive ≥ 2.5.3 (host of another machine)
        ("doc.txt..path2", nil),                                                  // rclone bisync < 1.66
        ("doc.txt.conflict1", nil),                                               // rclone bisync ≥ 1.66
        ("doc.txt (conflict_on_2026-11-23)", nil),                                // Unison
    ]

    @Test("the copies of every tool are unresolved conflict versions of the right item")
    func everyToolsCopies() throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            _ = try makeFile("other.txt", containing: "other", in: folder)
            for (name, _) in Self.copiesOfDoc { _ = try makeFile(name, containing: "copy \(name)", in: folder) }
            // Not versions of doc.txt: another item's copy, a temporary file, an ordinary name.
            _ = try makeFile("other.sync-conflict-20261123-051644-SUBNBV7.txt", containing: "x", in: folder)
            _ = try makeFile(".syncthing.doc.txt.tmp", containing: "x", in: folder)
            _ = try makeFile("doc (conflicted copy).txt", containing: "x", in: folder)

            let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: doc)
            #expect(Set(versions.map(\.url.lastPathComponent)) == Set(Self.copiesOfDoc.map(\.name)))
            #expect(try FileVersion.otherVersionsOfItem(at: doc).map(\.url) == versions.map(\.url))
            for version in versions {
                let expected = try #require(Self.copiesOfDoc.first { $0.name == version.url.lastPathComponent })
                #expect(version.url == folder.appendingPathComponent(expected.name))
                #expect(version.isConflict && !version.isResolved && !version.isDiscardable)
                #expect(version.hasLocalContents)
                #expect(version.localizedName == "doc.txt")
                #expect(version.localizedNameOfSavingComputer == expected.savingComputer, "\(expected.name)")
                let attributes = try FileManager.default.attributesOfItem(atPath: version.url.path)
                let modified = try #require(attributes[.modificationDate] as? Date)
                #expect(abs(try #require(version.modificationDate).timeIntervalSince(modified)) < 0.001)
                #expect(text(at: version.url) == "copy \(expected.name)")

                // Stable and Codable: the identifier survives JSON and finds the version again.
                let data = try JSONEncoder().encode(version.persistentIdentifier)
                let decoded = try JSONDecoder().decode(FileVersion.PersistentIdentifier.self, from: data)
                #expect(decoded == version.persistentIdentifier)
                #expect(decoded.rawValue == copyIdentifier(expected.name))
                let found = try #require(try FileVersion.version(itemAt: doc, forPersistentIdentifier: decoded))
                #expect(found.url == version.url && found.isConflict && !found.isResolved)
            }
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: folder.appendingPathComponent("other.txt")).count == 1)
            // An identifier of one item's copy does not name a version of another item.
            let foreign = FileVersion.PersistentIdentifier(rawValue: copyIdentifier("other.sync-conflict-20261123-051644-SUBNBV7.txt"))
            #expect(try FileVersion.version(itemAt: doc, forPersistentIdentifier: foreign) == nil)
        }
    }

    @Test("Syncthing's names for several dots, no extension and a leading dot")
    func syncthingNameShapes() throws {
        try withVersionStore { folder, _ in
            let cases = [("archive.tar.gz", "archive.tar.sync-conflict-20261123-053032-7AI57XW.gz"),
                         ("noext", "noext.sync-conflict-20261123-053032-7AI57XW"),
                         (".hidden", ".sync-conflict-20261123-053032-7AI57XW.hidden")]
            for (original, copy) in cases {
                let item = try makeFile(original, containing: "current", in: folder)
                _ = try makeFile(copy, containing: "theirs", in: folder)
                #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: item).map(\.url.lastPathComponent) == [copy])
            }
        }
    }

    @Test("oldest first: a copy made before a stored version is listed before it")
    func order() throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            _ = try makeFile("doc.sync-conflict-20261123-051644-SUBNBV7.txt", containing: "copy", in: folder)
            try addVersion("stored", of: doc, conflict: true)
            #expect(try FileVersion.otherVersionsOfItem(at: doc).map { text(at: $0.url) } == ["copy", "stored"])
        }
    }

    @Test("resolving deletes the copy (coordinated) and tells presenters: resolved, then lost")
    func resolvingDeletesTheCopy() async throws {
        try await withPrivateVersionStore {
            let folderScratch = try Scratch("clouddocs-copies")
            defer { folderScratch.remove() }
            let folder = folderScratch.url
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            let name = "doc.sync-conflict-20261123-051644-SUBNBV7.txt"
            let copyURL = try makeFile(name, containing: "theirs", in: folder)
            let presenter = VersionMessageRecorder(doc)
            Coordinator.addFilePresenter(presenter)
            defer { Coordinator.removeFilePresenter(presenter) }

            let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).first)
            version.isResolved = true
            #expect(version.isResolved && version.isConflict)
            #expect(!FileManager.default.fileExists(atPath: copyURL.path))
            #expect(!version.hasLocalContents)
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).isEmpty)
            #expect(try FileVersion.otherVersionsOfItem(at: doc).isEmpty)
            #expect(try FileVersion.version(itemAt: doc, forPersistentIdentifier: version.persistentIdentifier) == nil)
            #expect(text(at: doc) == "current")
            let id = copyIdentifier(name)
            #expect(try await presenter.wait { $0.contains("lose \(id)") })
            // (The coordinated write of the item also sends presentedItemDidChange, as for stored versions.)
            #expect(presenter.messages.withLock { $0 }.filter { $0 != "change" } == ["resolve \(id)", "lose \(id)"])
            #expect(throws: FileVersionError.versionNotFound(copyURL)) { try version.remove() }
        }
    }

    @Test("remove(), removeOtherVersionsOfItem and replaceItem(.byMoving) delete or move the copy")
    func removingAndReplacing() throws {
        try withVersionStore { folder, _ in
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            let first = try makeFile("doc (conflicted copy 2026-11-23 051644).txt", containing: "one", in: folder)
            _ = try makeFile("doc.txt (conflict_on_2026-11-23)", containing: "two", in: folder)
            _ = try makeFile("doc.txt..path1", containing: "three", in: folder)

            let removing = try #require(try FileVersion.version(
                itemAt: doc, forPersistentIdentifier: .init(rawValue: copyIdentifier(first.lastPathComponent))))
            try removing.remove()
            #expect(!FileManager.default.fileExists(atPath: first.path))
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).count == 2)

            // Copying keeps the copy; moving renames it over the item.
            let unison = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).first { text(at: $0.url) == "two" })
            #expect(try unison.replaceItem(at: doc) == doc)
            #expect(text(at: doc) == "two" && unison.hasLocalContents)
            try unison.replaceItem(at: doc, options: .byMoving)
            #expect(text(at: doc) == "two" && !unison.hasLocalContents)
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: doc).map { text(at: $0.url) } == ["three"])

            try addVersion("stored", of: doc)
            try FileVersion.removeOtherVersionsOfItem(at: doc)
            #expect(try FileVersion.otherVersionsOfItem(at: doc).isEmpty)
            #expect(listing(folder) == ["doc.txt"])
        }
    }

    @Test("names that are not UTF-8: listed, identified, found again and resolved by their bytes")
    func nonUTF8Names() throws {
        try withVersionStore { folder, _ in
            let original: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)          // Latin-1 "café.txt"
            let copy: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".sync-conflict-20261123-051644-SUBNBV7.txt".utf8)
            #expect(writeRaw(in: folder, original, "current"))
            #expect(writeRaw(in: folder, copy, "theirs"))
            let item = rawNameURL(in: folder, original)

            let version = try #require(try FileVersion.unresolvedConflictVersionsOfItem(at: item).first)
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: item).count == 1)
            #expect(version.url == rawNameURL(in: folder, copy))
            #expect(!version.persistentIdentifier.rawValue.contains("\u{0}"))
            #expect(version.persistentIdentifier.rawValue.hasSuffix("caf%E9.sync-conflict-20261123-051644-SUBNBV7.txt"))
            let data = try JSONEncoder().encode(version.persistentIdentifier)
            let decoded = try JSONDecoder().decode(FileVersion.PersistentIdentifier.self, from: data)
            #expect(try FileVersion.version(itemAt: item, forPersistentIdentifier: decoded)?.url == version.url)

            try version.resolve()
            #expect(readRaw(in: folder, copy) == nil)
            #expect(readRaw(in: folder, original) == "current")
        }
    }

    @Test("rclone bisync: with no file under the real name, the newer copy becomes the item; the other stays a conflict")
    func bisyncPromotionOnQuery() throws {
        try withVersionStore { folder, _ in
            let item = folder.appendingPathComponent("notes.md")
            let older = try makeFile("notes.md..path1", containing: "path1 older", in: folder)
            let newer = try makeFile("notes.md..path2", containing: "path2 newer", in: folder)
            try setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), of: older)
            try setModificationDate(Date(timeIntervalSince1970: 1_700_000_100), of: newer)

            let conflicts = try FileVersion.unresolvedConflictVersionsOfItem(at: item)
            #expect(text(at: item) == "path2 newer")
            #expect(!FileManager.default.fileExists(atPath: newer.path))
            #expect(conflicts.map(\.url) == [older])
            #expect(conflicts.first?.localizedName == "notes.md")
            let attributes = try FileManager.default.attributesOfItem(atPath: item.path)
            #expect(attributes[.modificationDate] as? Date == Date(timeIntervalSince1970: 1_700_000_100))

            // Equal times: path1 wins. currentVersionOfItem promotes too.
            let other = folder.appendingPathComponent("todo.txt")
            let one = try makeFile("todo.txt..path1", containing: "one", in: folder)
            let two = try makeFile("todo.txt..path2", containing: "two", in: folder)
            try setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), of: one)
            try setModificationDate(Date(timeIntervalSince1970: 1_700_000_000), of: two)
            #expect(try FileVersion.currentVersionOfItem(at: other).url == other)
            #expect(text(at: other) == "one")
            #expect(try FileVersion.otherVersionsOfItem(at: other).map(\.url) == [two])

            // Other tools' copies are never promoted: the user deleted the original.
            let gone = folder.appendingPathComponent("gone.txt")
            _ = try makeFile("gone.sync-conflict-20261123-051644-SUBNBV7.txt", containing: "kept", in: folder)
            #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: gone).count == 1)
            #expect(!FileManager.default.fileExists(atPath: gone.path))
            #expect(throws: FileVersionError.itemNotFound(folder.appendingPathComponent("never.txt"))) {
                try FileVersion.otherVersionsOfItem(at: folder.appendingPathComponent("never.txt"))
            }
        }
    }

    @Test("sync temporaries and conflict copies written by a coordinator are not new subitems; a copy is a gained version")
    func notSubitems() async throws {
        try await withPrivateVersionStore {
            let folderScratch = try Scratch("clouddocs-copies")
            defer { folderScratch.remove() }
            let folder = folderScratch.url
            let doc = try makeFile("doc.txt", containing: "current", in: folder)
            let folderPresenter = VersionMessageRecorder(folder)
            let docPresenter = VersionMessageRecorder(doc)
            Coordinator.addFilePresenter(folderPresenter)
            Coordinator.addFilePresenter(docPresenter)
            defer {
                Coordinator.removeFilePresenter(folderPresenter)
                Coordinator.removeFilePresenter(docPresenter)
            }
            let copyName = "doc.sync-conflict-20261123-051644-SUBNBV7.txt"
            for name in [".syncthing.doc.txt.tmp", "~syncthing~doc.txt.tmp", ".doc.txt.~1a2b", "doc.txt.part",
                         ".~lock.doc.txt#", copyName, "new.txt"] {
                try await coordinatedPut("x", at: folder.appendingPathComponent(name))
            }
            #expect(try await folderPresenter.wait { $0.contains("appear new.txt") })
            #expect(folderPresenter.messages.withLock { $0 } == ["appear new.txt"])
            #expect(try await docPresenter.wait { $0.contains("gain \(copyIdentifier(copyName))") })
            #expect(docPresenter.messages.withLock { $0 } == ["gain \(copyIdentifier(copyName))"])
        }
    }
}
