import Foundation
import Glibc
import Testing
@testable import CloudDocuments

@Suite("Version store: bounds, moves, identity")
struct VersionStoreTests {
    @Test("at most maximumVersionsPerItem droppable versions per item; unresolved conflicts are never dropped")
    func perItemLimit() throws {
        try withVersionStore(limits: .init(maximumVersionsPerItem: 3)) { folder, _ in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            try addVersion("conflict", of: item, conflict: true)
            for number in 1...5 { try addVersion("v\(number)", of: item) }
            #expect(try versionTexts(of: item) == ["conflict", "v3", "v4", "v5"])
        }
    }

    @Test("discardable versions are dropped before older ones")
    func discardableFirst() throws {
        try withVersionStore(limits: .init(maximumVersionsPerItem: 2)) { folder, _ in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            try addVersion("v1", of: item)
            let second = try addVersion("v2", of: item)
            try second.setDiscardable(true)
            try addVersion("v3", of: item)
            #expect(try versionTexts(of: item) == ["v1", "v3"])
        }
    }

    @Test("beyond maximumTotalBytes the oldest droppable versions of any item go first; the new one stays")
    func storeByteLimit() throws {
        try withVersionStore(limits: .init(maximumTotalBytes: 25)) { folder, _ in
            let first = try makeFile("a.txt", containing: "now", in: folder)
            let second = try makeFile("b.txt", containing: "now", in: folder)
            try addVersion("aaaaaaaaaa", of: first)                     // 10 bytes
            try addVersion("cccccccccc", of: second, conflict: true)    // 10, never dropped
            try addVersion("bbbbbbbbbb", of: second)                    // 30 > 25: drops a's
            #expect(try versionTexts(of: first) == [])
            #expect(try versionTexts(of: second) == ["cccccccccc", "bbbbbbbbbb"])
            try addVersion(String(repeating: "x", count: 40), of: first)  // Alone over budget: kept.
            #expect(try versionTexts(of: first) == [String(repeating: "x", count: 40)])
            #expect(try versionTexts(of: second) == ["cccccccccc"])
        }
    }

    @Test("versions follow a coordinated move of the item (forMoving + item(at:didMoveTo:))")
    func followsCoordinatedMove() throws {
        try withVersionStore { folder, store in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            try addVersion("before the move", of: item)
            let subfolder = folder.appendingPathComponent("archive", isDirectory: true)
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
            let destination = subfolder.appendingPathComponent("renamed.txt")
            let coordinator = Coordinator()
            try coordinator.coordinate(writingItemAt: item, options: .forMoving,
                                       writingItemAt: destination, options: .forReplacing) { from, to in
                try FileManager.default.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            }
            #expect(try versionTexts(of: destination) == ["before the move"])
            // A new file at the old path is a different item.
            try put("stranger", at: item)
            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)

            // The next change records the new path; a save that replaces the file (new inode,
            // identity attribute gone) still finds the versions by that path.
            try addVersion("after the move", of: destination)
            let itemID = try #require(ItemIdentityAttribute.read(destination.path))
            #expect(store.readItemRecord(itemID)?.path == destination.path)
            try SafeSave.write(Data("saved".utf8), to: destination, creating: false)
            #expect(ItemIdentityAttribute.read(destination.path) == nil)
            #expect(try versionTexts(of: destination) == ["before the move", "after the move"])
        }
    }

    @Test("a copy that carries the identity attribute gets versions of its own")
    func copyIsADifferentItem() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            try addVersion("original's", of: item)
            let copy = folder.appendingPathComponent("copy.txt")
            try FileManager.default.copyItem(at: item, to: copy)
            let id = try #require(ItemIdentityAttribute.read(item.path))
            ItemIdentityAttribute.write(id, to: copy.path)  // As `cp -a` would.
            #expect(try FileVersion.otherVersionsOfItem(at: copy).isEmpty)
            try addVersion("copy's", of: copy)
            #expect(try versionTexts(of: copy) == ["copy's"])
            #expect(try versionTexts(of: item) == ["original's"])
        }
    }

    @Test("inside a coordinated write, passing its coordinator adds a version without deadlock")
    func nestedInsideOwnWrite() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "old", in: folder)
            let coordinator = Coordinator()
            try coordinator.coordinate(writingItemAt: item) { url in
                try FileVersion.addOfItem(at: url, withContentsOf: url, coordinator: coordinator)
                try put("new", at: url)
            }
            #expect(try versionTexts(of: item) == ["old"])
            #expect(text(at: item) == "new")
        }
    }

    @Test("the store is outside the document folder: under the passwd home, or the environment override")
    func storeLocation() throws {
        let standard = VersionStore.$override.withValue(nil) { VersionStore.standard }
        if let explicit = ProcessInfo.processInfo.environment[VersionStore.environmentVariable] {
            #expect(standard.root == explicit)
        } else {
            #expect(standard.root == VersionStore.passwdHome() + "/.local/share/clouddocuments/versions")
        }
    }
}

@Suite("Version store: folders and nesting")
struct VersionStoreFolderTests {
    @Test("a folder (package) version is stored whole and restored whole")
    func folderVersion() throws {
        try withVersionStore { folder, _ in
            let package = folder.appendingPathComponent("drawing.pkg", isDirectory: true)
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try put("one", at: package.appendingPathComponent("a.txt"))
            try put("two", at: package.appendingPathComponent("b.txt"))
            let version = try FileVersion.addOfItem(at: package, withContentsOf: package)
            #expect(listing(version.url) == ["a.txt", "b.txt"])
            try put("changed", at: package.appendingPathComponent("a.txt"))
            try put("extra", at: package.appendingPathComponent("c.txt"))
            _ = try version.replaceItem(at: package)
            #expect(listing(package) == ["a.txt", "b.txt"])
            #expect(text(at: package.appendingPathComponent("a.txt")) == "one")
            #expect(listing(folder) == ["drawing.pkg"])
            #expect(try FileVersion.otherVersionsOfItem(at: package).count == 1)
        }
    }

    @Test("inside a coordinated write, a call without the caller's coordinator joins that write (Apple's recipe)")
    func nestedWithoutCoordinatorJoins() throws {
        try withVersionStore { folder, _ in
            let item = try makeFile("note.txt", containing: "old", in: folder)
            let coordinator = Coordinator()
            _ = try coordinator.coordinate(writingItemAt: item) { url in
                // Before, this made a second coordinator that would have waited for the first
                // (reported as would-deadlock); it now runs inside the caller's write.
                try FileVersion.addOfItem(at: url, withContentsOf: url)
            }
            #expect(try FileVersion.otherVersionsOfItem(at: item).map { text(at: $0.url) } == ["old"])
        }
    }
}

@Suite("Version store: threads")
struct VersionStoreThreadTests {
    @Test("eight threads adding versions of one item at once: every version is kept, whole")
    func concurrentAdds() throws {
        try withVersionStore { folder, store in
            let item = try makeFile("note.txt", containing: "now", in: folder)
            let failures = Locked(0)
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                VersionStore.$override.withValue(store) {
                    do { try addVersion("version \(index)", of: item) } catch { failures.withLock { $0 += 1 } }
                }
            }
            #expect(failures.withLock { $0 } == 0)
            let texts = try versionTexts(of: item).compactMap { $0 }
            #expect(Set(texts) == Set((0..<8).map { "version \($0)" }))
        }
    }
}
