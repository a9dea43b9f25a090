import Foundation
import Glibc
import Testing
@testable import CloudDocuments

/// `kill -9` of a real process while it adds a version: the store then holds the whole version or
/// none of it, and the next store operation leaves no partial files. The worker announces through
/// a pipe where it stopped (never a sleep).
@Suite("Version store: kill -9 while adding")
struct VersionStoreCrashTests {
    static let contentsSize = 2 << 20

    @Test("killed before the version is in place: no version, and the next listing removes the leftovers",
          arguments: ["contents-written", "before-rename"])
    func killedBeforeRename(step: String) throws {
        try withVersionStore { folder, store in
            let (item, contents) = try prepare(in: folder)
            try killWorker(at: step, item: item, contents: contents, store: store)
            let itemID = try #require(ItemIdentityAttribute.read(item.path))
            #expect(leftovers(store.itemFolder(itemID)).count == 1, "the killed worker left its temporary folder")

            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)
            #expect(leftovers(store.itemFolder(itemID)).isEmpty)
            #expect(FileManager.default.contents(atPath: contents.path)?.count == Self.contentsSize)

            // The store still works for that item.
            try FileVersion.addOfItem(at: item, withContentsOf: contents)
            #expect(try FileVersion.otherVersionsOfItem(at: item).count == 1)
        }
    }

    @Test("killed right after the rename: the whole version is there")
    func killedAfterRename() throws {
        try withVersionStore { folder, store in
            let (item, contents) = try prepare(in: folder)
            try killWorker(at: "after-rename", item: item, contents: contents, store: store)
            let versions = try FileVersion.otherVersionsOfItem(at: item)
            #expect(versions.count == 1)
            let bytes = versions.first.flatMap { FileManager.default.contents(atPath: $0.url.path) }
            #expect(bytes == FileManager.default.contents(atPath: contents.path))
            let itemID = try #require(ItemIdentityAttribute.read(item.path))
            #expect(leftovers(store.itemFolder(itemID)).isEmpty)
        }
    }

    @Test("a live worker's temporary folder is never removed by another process's listing")
    func liveWorkerIsLeftAlone() throws {
        try withVersionStore { folder, store in
            let (item, contents) = try prepare(in: folder)
            let worker = try ChildProcess(["add-version-and-wait", "before-rename", item.path, contents.path],
                                          environment: environment(store))
            #expect(worker.readLine() == "PAUSED before-rename")
            #expect(try FileVersion.otherVersionsOfItem(at: item).isEmpty)  // Sweeps; must skip it.
            worker.send("go")
            #expect(worker.readLine()?.hasPrefix("ADDED ") == true)
            worker.waitForExit()
            #expect(try FileVersion.otherVersionsOfItem(at: item).count == 1)
        }
    }

    @Test("killed while removing, after the rename to trash: the version is gone whole, the trash is removed next")
    func killedWhileRemoving() throws {
        try withVersionStore { folder, store in
            let item = try makeFile("report.txt", containing: "current", in: folder)
            try addVersion("first", of: item)
            try addVersion("second", of: item)
            let worker = try ChildProcess(["add-version-and-wait", "remove", item.path], environment: environment(store))
            let line = worker.readLine()
            #expect(line == "PAUSED moved-to-trash", "the worker should have paused, said \(line ?? "nothing")")
            worker.kill9()
            let itemID = try #require(ItemIdentityAttribute.read(item.path))
            #expect(leftovers(store.itemFolder(itemID)).count == 1, "the killed worker left its trash")
            #expect(try versionTexts(of: item) == ["second"])
            #expect(leftovers(store.itemFolder(itemID)).isEmpty)
        }
    }

    // MARK: Helpers

    func prepare(in folder: URL) throws -> (item: URL, contents: URL) {
        let item = try makeFile("report.txt", containing: "current", in: folder)
        let contents = folder.deletingLastPathComponent().appendingPathComponent("old-contents.bin")
        try Data((0..<Self.contentsSize).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: contents)
        return (item, contents)
    }

    func environment(_ store: VersionStore) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[VersionStore.environmentVariable] = store.root
        return environment
    }

    func killWorker(at step: String, item: URL, contents: URL, store: VersionStore) throws {
        let worker = try ChildProcess(["add-version-and-wait", step, item.path, contents.path],
                                      environment: environment(store))
        let line = worker.readLine()
        #expect(line == "PAUSED \(step)", "the worker should have paused, said \(line ?? "nothing")")
        worker.kill9()
    }

    /// Temporary and trash entries in an item's folder of the store.
    func leftovers(_ itemFolder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: itemFolder)) ?? []).filter {
            $0.hasPrefix(VersionStore.temporaryPrefix) || $0.hasPrefix(VersionStore.trashPrefix)
                || $0.hasPrefix(VersionStore.jsonTemporaryPrefix)
        }
    }
}
