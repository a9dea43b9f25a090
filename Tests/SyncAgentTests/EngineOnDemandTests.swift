import FileCoordination
import Foundation
import Glibc
import Synchronization
import Testing
import TestSupport
import Ubiquity
@testable import SyncAgent

/// Files on demand, the agent's side, in memory: failed download requests answered, requests
/// that survive a restart, the server deleting or changing an evicted item, pins, folders,
/// packages and the space budget.
@Suite("The engine: download requests, pins, folders and the space budget")
struct EngineOnDemandTests {
    /// Writes `path` on A, syncs A, and evicts it.
    private func evicted(_ devices: TwoDevices, _ text: String, _ path: String) async throws {
        try devices.write(text, path, on: devices.a)
        await devices.sync(devices.a)
        #expect(await devices.a.evict(path) == nil)
    }

    @Test("offline: a download request is answered with a reason that says offline after the first failed look; it stays queued and arrives when the server is back")
    func refusedWhenOffline() async throws {
        let devices = try TwoDevices()
        try await evicted(devices, "in the cloud", "a.txt")
        try devices.write("here", "here.txt", on: devices.a)
        await devices.sync(devices.a)
        devices.store.setFailure(.transport("connection refused"))
        // Already here: nothing to do, never refused.
        #expect(await devices.a.requestDownload("here.txt", requestID: "already") == nil)
        #expect(await devices.a.requestDownload("a.txt", requestID: "request-1") == nil)
        let pass = await devices.a.syncOnce()
        #expect(pass.wentOffline)
        let reason = try #require(await devices.a.status.refusedRequests?["request-1"])
        #expect(reason.contains("offline"), "\(reason)")
        #expect(await devices.a.status.refusedRequests?["already"] == nil)
        #expect(await devices.a.requestedDownloads == ["a.txt"])
        // Saved: a new engine (a restarted agent) finds the request.
        let restarted = try SyncEngine(configuration: TwoDevices.configuration(devices.scratch.url.appending(path: "A"), SyncGuards(), .seconds(3600)),
                                       store: devices.store)
        #expect(await restarted.requestedDownloads == ["a.txt"])
        devices.store.setFailure(nil)
        await devices.sync(devices.a)
        #expect(devices.read("a.txt", on: devices.a) == "in the cloud")
        #expect(try ItemPlaceholder.read(forItemAt: devices.url(devices.a, "a.txt")) == nil)
        #expect(await devices.a.requestedDownloads.isEmpty)
    }

    @Test("the server deletes an evicted item: its placeholder goes and a waiting request is answered; the server changes one: its placeholder shows the new size, still evicted")
    func serverDeletesOrChanges() async throws {
        let devices = try TwoDevices()
        try await evicted(devices, "short", "gone.txt")
        try await evicted(devices, "short", "changed.txt")
        try devices.write("keep", "keep.txt", on: devices.a)
        try devices.write("keep", "keep2.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try FileManager.default.removeItem(at: devices.url(devices.b, "gone.txt"))
        try devices.write("a much longer text from B", "changed.txt", on: devices.b)
        await devices.sync(devices.b)

        #expect(await devices.a.requestDownload("gone.txt", requestID: "gone") == nil)
        // The request is answered by the pass that finds it deleted (its download never starts).
        await devices.sync(devices.a)
        let goneURL = devices.url(devices.a, "gone.txt")
        #expect(try ItemPlaceholder.read(forItemAt: goneURL) == nil)
        #expect(!FileManager.default.fileExists(atPath: goneURL.path))
        #expect(await devices.a.status.refusedRequests?["gone"]?.contains("deleted on the server") == true)
        #expect(await devices.a.requestedDownloads.isEmpty)
        let changed = try #require(try ItemPlaceholder.read(forItemAt: devices.url(devices.a, "changed.txt")))
        #expect(changed.size == Int64("a much longer text from B".utf8.count))
        #expect(!FileManager.default.fileExists(atPath: devices.url(devices.a, "changed.txt").path))
        // Nothing more on the next pass; the placeholder is not deleted on the server either.
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
        #expect(devices.store.data(at: "changed.txt") != nil)
        // Downloaded: the current bytes.
        #expect(await devices.a.requestDownload("changed.txt") == nil)
        await devices.sync(devices.a)
        #expect(devices.read("changed.txt", on: devices.a) == "a much longer text from B")
    }

    @Test("pins: a pinned evicted item is downloaded, a pinned item is not evicted, unpinning allows it again; a folder is evicted and downloaded item by item")
    func pinsAndFolders() async throws {
        let devices = try TwoDevices()
        try devices.write("one", "Folder/one.txt", on: devices.a)
        try devices.write("two", "Folder/Inner/two.txt", on: devices.a)
        try devices.write("three", "three.txt", on: devices.a)
        await devices.sync(devices.a)

        #expect(await devices.a.evict("Folder") == nil)
        for path in ["Folder/one.txt", "Folder/Inner/two.txt"] {
            #expect(!FileManager.default.fileExists(atPath: devices.url(devices.a, path).path))
            #expect(try ItemPlaceholder.read(forItemAt: devices.url(devices.a, path)) != nil)
        }
        #expect(FileManager.default.fileExists(atPath: devices.url(devices.a, "three.txt").path))
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
        #expect(await devices.a.requestDownload("Folder") == nil)
        await devices.sync(devices.a)
        #expect(devices.read("Folder/one.txt", on: devices.a) == "one")
        #expect(devices.read("Folder/Inner/two.txt", on: devices.a) == "two")
        #expect(try ItemPlaceholder.read(forItemAt: devices.url(devices.a, "Folder/one.txt")) == nil)

        // Pinned: evicting is refused (also through the folder), and an evicted item comes back.
        #expect(await devices.a.evict("three.txt") == nil)
        #expect(await devices.a.pin("three.txt") == nil)
        await devices.sync(devices.a)
        #expect(devices.read("three.txt", on: devices.a) == "three")
        #expect(await devices.a.evict("three.txt")?.contains("pinned") == true)
        #expect(await devices.a.pin("Folder") == nil)
        #expect(await devices.a.evict("Folder/one.txt")?.contains("pinned") == true)
        #expect(await devices.a.unpin("Folder/one.txt")?.contains("through Folder") == true)
        #expect(await devices.a.pinnedPaths == ["Folder", "three.txt"])
        #expect(await devices.a.unpin("Folder") == nil)
        #expect(await devices.a.evict("Folder/one.txt") == nil)
        // Pins are saved: a new engine (a restarted agent) keeps them.
        let again = try SyncEngine(configuration: TwoDevices.configuration(devices.scratch.url.appending(path: "A"), SyncGuards(), .seconds(3600)),
                                   store: devices.store)
        #expect(await again.pinnedPaths == ["three.txt"])
    }

    @Test("a package is evicted whole as one placeholder, and downloaded whole")
    func packages() async throws {
        let (scratch, store, configuration, engine) = try Self.oneDevice("engine-on-demand-package") { $0.packageExtensions = ["pkgdoc"] }
        defer { scratch.remove() }
        let package = configuration.containerURL.appending(path: "Report.pkgdoc", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: package.appending(path: "Data"), withIntermediateDirectories: true)
        try Data("index".utf8).write(to: package.appending(path: "index.txt"))
        try Data("payload!".utf8).write(to: package.appending(path: "Data/blob.bin"))
        #expect(await engine.syncOnce().failed.isEmpty)

        #expect(await engine.evict("Report.pkgdoc") == nil)
        #expect(!FileManager.default.fileExists(atPath: package.path))
        let placeholder = try #require(try ItemPlaceholder.read(forItemAt: package))
        #expect(placeholder.isPackage && placeholder.size == 13)
        #expect(await engine.syncOnce().plan.steps.isEmpty)
        #expect(store.data(at: "Report.pkgdoc/Data/blob.bin") != nil)
        #expect(await engine.requestDownload("Report.pkgdoc") == nil)
        #expect(await engine.syncOnce().failed.isEmpty)
        #expect((try? String(contentsOf: package.appending(path: "Data/blob.bin"), encoding: .utf8)) == "payload!")
        #expect(try ItemPlaceholder.read(forItemAt: package) == nil)
    }

    @Test("the space budget evicts the least recently used uploaded files, never a pinned, open with unsaved changes, or recently used one")
    func spaceBudget() async throws {
        let (scratch, store, configuration, engine) = try Self.oneDevice("engine-space-budget") { $0.spaceBudget = 3500 }
        defer { scratch.remove() }
        let container = configuration.containerURL
        // Five files of 1000 bytes, used long ago in this order (times set before they are synced:
        // setting them changes the status-change time the journal records).
        let names = ["oldest", "pinned", "older", "old", "recent"]
        for (index, name) in names.enumerated() {
            let url = container.appending(path: "\(name).bin")
            try Data(repeating: UInt8(index), count: 1000).write(to: url)
            let seconds = name == "recent" ? Int(Date().timeIntervalSince1970) : 1_000_000 + index * 1000
            var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
        }
        // Not pinned yet and nothing to evict: 5000 bytes, but the first pass only uploads.
        #expect(await engine.pin("pinned.bin")?.contains("not a synced item") == true)
        var pass = await engine.syncOnce()
        #expect(pass.failed.isEmpty)
        // Evicted: the two least recently used (5000 → 4000 → 3000 bytes, within 3500).
        #expect(pass.evictedForSpace == ["oldest.bin", "pinned.bin"])
        for name in ["oldest", "pinned"] {
            #expect(try ItemPlaceholder.read(forItemAt: container.appending(path: "\(name).bin")) != nil)
        }
        // Pinned: downloaded again, and never evicted. old.bin has a presenter that does not
        // accommodate evictions (the eviction's coordinated write asks it, and it refuses, as
        // Apple's default does); older.bin and recent.bin were used just now. So nothing is
        // evicted, though over the budget.
        let open = UnsavedDocument(container.appending(path: "old.bin"))
        Coordinator.addFilePresenter(open)
        defer { Coordinator.removeFilePresenter(open) }
        #expect(await engine.pin("pinned.bin") == nil)
        try Data(repeating: 9, count: 1000).write(to: container.appending(path: "older.bin"))
        pass = await engine.syncOnce()   // downloads pinned.bin, uploads older.bin
        #expect(pass.failed.isEmpty)
        #expect(FileManager.default.fileExists(atPath: container.appending(path: "pinned.bin").path))
        #expect(pass.evictedForSpace.isEmpty, "\(pass.evictedForSpace)")
        #expect(open.saves.withLock { $0 } == 0, "an eviction asks to step aside, not to save")
        #expect((try? Data(contentsOf: container.appending(path: "old.bin"))) == Data(repeating: 3, count: 1000))
        for name in ["pinned", "older", "old", "recent"] {
            #expect(FileManager.default.fileExists(atPath: container.appending(path: "\(name).bin").path), "\(name)")
        }
    }

    /// One device's engine on an in-memory server, in a new scratch folder (removed by the
    /// caller), its configuration adjusted by `adjust` first.
    private static func oneDevice(_ label: String, _ adjust: (inout SyncEngineConfiguration) -> Void) throws
        -> (Scratch, InMemoryRemoteStore, SyncEngineConfiguration, SyncEngine) {
        let scratch = try Scratch(label)
        let store = InMemoryRemoteStore()
        let root = scratch.url.appending(path: "A")
        try FileManager.default.createDirectory(at: root.appending(path: TwoDevices.identifier), withIntermediateDirectories: true)
        var configuration = TwoDevices.configuration(root, SyncGuards(), .seconds(3600))
        adjust(&configuration)
        return (scratch, store, configuration, try SyncEngine(configuration: configuration, store: store))
    }
}

/// A presenter with unsaved changes that would write them if asked to save, and that does not
/// implement `accommodatePresentedItemEviction` (so it refuses evictions, the default).
private final class UnsavedDocument: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue
    let saves = Locked(0)

    init(_ url: URL) {
        presentedItemURL = url
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        presentedItemOperationQueue = queue
    }

    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        saves.withLock { $0 += 1 }
        guard let url = presentedItemURL else { return completionHandler(nil) }
        completionHandler(Result { try Data("saved edits".utf8).write(to: url) }.error)
    }
}

private extension Result {
    var error: Failure? { if case .failure(let error) = self { error } else { nil } }
}
