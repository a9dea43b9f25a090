import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// Package documents (folders with a registered package extension) sync as one unit: the planner
/// plans the package, never its files; the server never shows half a package under its name; the
/// other device gets it whole; a conflict is one conflict version of the whole package; an
/// interrupted replacement is undone at restart, and the other device deletes nothing meanwhile.
@Suite("Sync engine: package documents as one unit")
struct EnginePackageTests {
    static let pathExtension = "cdpkg"
    static let package = "Doc.cdpkg"

    /// Two devices whose engines treat `*.cdpkg` folders as packages.
    static func devices() throws -> TwoDevices {
        Coordinator.registerPackageExtension(pathExtension)
        return try TwoDevices()
    }

    static func writePackage(_ devices: TwoDevices, on engine: SyncEngine, files: [String: String]) throws {
        for (path, text) in files { try devices.write(text, package + "/" + path, on: engine) }
    }

    /// The files of the package on `engine`'s device, relative to it, with their texts.
    static func files(_ devices: TwoDevices, on engine: SyncEngine) -> [String: String] {
        let root = devices.url(engine, package).path
        var found: [String: String] = [:]
        for (relative, item) in PackageTree.items(of: root) ?? [] where !item.isFolder {
            found[relative] = (try? String(contentsOfFile: root + "/" + relative, encoding: .utf8)) ?? "?"
        }
        return found
    }

    /// The server's files of the package, relative to it.
    static func serverFiles(_ store: InMemoryRemoteStore) -> Set<String> {
        Set(store.paths.filter { $0.hasPrefix(package + "/") }.compactMap { path in
            store.data(at: path) == nil ? nil : String(path.dropFirst(package.count + 1))
        })
    }

    @Test("a new package reaches the other device whole, planned as one item")
    func newPackage() async throws {
        let devices = try Self.devices()
        let contents = ["index.txt": "v1", "media/a.txt": "A", "media/b.txt": "B"]
        try Self.writePackage(devices, on: devices.a, files: contents)
        let up = await devices.sync(devices.a)
        #expect(up.plan.steps == [.upload(Self.package)])
        #expect(Self.serverFiles(devices.store) == Set(contents.keys))
        #expect(!devices.store.paths.contains { $0.hasPrefix(".clouddocsd") })
        let down = await devices.sync(devices.b)
        #expect(down.plan.steps == [.download(Self.package)])
        #expect(Self.files(devices, on: devices.b) == contents)
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
        #expect(await devices.sync(devices.b).plan.steps.isEmpty)
    }

    @Test("an edited package replaces the whole package: the server shows the old one until the new one is complete")
    func editedPackage() async throws {
        let devices = try Self.devices()
        try Self.writePackage(devices, on: devices.a, files: ["index.txt": "v1", "media/a.txt": "A"])
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try devices.write("v2", Self.package + "/index.txt", on: devices.a)
        try devices.write("new", Self.package + "/new.txt", on: devices.a)
        try FileManager.default.removeItem(at: devices.url(devices.a, Self.package + "/media/a.txt"))
        let seen = Locked<[Set<String>]>([])
        devices.store.onUpload { paths in
            let names = Set(paths.map(\.description).filter { $0.hasPrefix(Self.package + "/") })
            seen.withLock { $0.append(names) }
        }
        let up = await devices.sync(devices.a)
        #expect(up.plan.steps == [.upload(Self.package)])
        let old: Set<String> = [Self.package + "/index.txt", Self.package + "/media", Self.package + "/media/a.txt"]
        #expect(!seen.withLock { $0 }.isEmpty)
        #expect(seen.withLock { $0 }.allSatisfy { $0 == old }, "the real name showed a partial package: \(seen.withLock { $0 })")
        #expect(Self.serverFiles(devices.store) == ["index.txt", "new.txt"])
        #expect(!devices.store.paths.contains { $0.hasPrefix(".clouddocsd") })
        await devices.sync(devices.b)
        #expect(Self.files(devices, on: devices.b) == ["index.txt": "v2", "new.txt": "new"])
        #expect(await devices.sync(devices.a).plan.steps.isEmpty)
    }

    @Test("both devices edit the package: one conflict version of the whole package, on both devices")
    func packageConflict() async throws {
        let devices = try Self.devices()
        try Self.writePackage(devices, on: devices.a, files: ["index.txt": "v1", "media/a.txt": "A"])
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try devices.write("edit A", Self.package + "/index.txt", on: devices.a)
        try devices.write("edit B", Self.package + "/index.txt", on: devices.b)
        await devices.sync(devices.a)
        let conflict = await devices.sync(devices.b)
        #expect(conflict.plan.steps == [.conflict(Self.package)])
        #expect(Self.files(devices, on: devices.b) == ["index.txt": "edit A", "media/a.txt": "A"])
        for engine in [devices.b, devices.a] {
            if engine === devices.a { await devices.sync(devices.a) }
            let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: devices.url(engine, Self.package))
            #expect(versions.count == 1)
            let version = try #require(versions.first)
            #expect(try String(contentsOf: version.url.appending(path: "index.txt"), encoding: .utf8) == "edit B")
            #expect(try String(contentsOf: version.url.appending(path: "media/a.txt"), encoding: .utf8) == "A")
        }
        #expect(await devices.sync(devices.b).plan.steps.isEmpty)
    }

    @Test("a package that changes on the server while it is downloaded is not put in place; the next pass takes the new one whole")
    func changedDuringDownload() async throws {
        let devices = try Self.devices()
        try Self.writePackage(devices, on: devices.a, files: ["index.txt": "v1", "media/a.txt": "A"])
        await devices.sync(devices.a)
        // While B fetches the first file, another device replaces a file of the package.
        devices.store.afterNextDownload { state in InMemoryRemoteStore.put("v2", at: Self.package + "/media/a.txt", in: &state) }
        let first = await devices.b.syncOnce()
        #expect(first.failed.count == 1)
        #expect(first.failed.allSatisfy { if case .deferred = $0.error { true } else { false } })
        #expect(!FileManager.default.fileExists(atPath: devices.url(devices.b, Self.package).path))
        await devices.sync(devices.b)
        #expect(Self.files(devices, on: devices.b) == ["index.txt": "v1", "media/a.txt": "v2"])
    }

    @Test("a package deleted here is deleted on the server whole; one deleted there is deleted here")
    func packageDeletion() async throws {
        let devices = try Self.devices()
        try Self.writePackage(devices, on: devices.a, files: ["index.txt": "v1", "media/a.txt": "A"])
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        try FileManager.default.removeItem(at: devices.url(devices.a, Self.package))
        let gone = await devices.sync(devices.a)
        #expect(gone.plan.steps == [.deleteRemote(Self.package)])
        #expect(devices.store.paths.isEmpty)
        let followed = await devices.sync(devices.b)
        #expect(followed.plan.steps == [.deleteLocal(Self.package)])
        #expect(!FileManager.default.fileExists(atPath: devices.url(devices.b, Self.package).path))
    }

    @Test("a package replacement interrupted by kill -9 is undone at restart; the other device deletes nothing meanwhile")
    func interruptedReplacement() async throws {
        let devices = try Self.devices()
        let contents = ["index.txt": "v1", "media/a.txt": "A"]
        try Self.writePackage(devices, on: devices.a, files: contents)
        await devices.sync(devices.a)
        await devices.sync(devices.b)
        // The state a `kill -9` leaves right after A moved the server's package aside: the
        // package is missing under its name, and A's journal holds the unfinished rename.
        let configuration = devices.a.configuration
        let aside = ".clouddocsd-aside-test"
        let journal = try SyncJournal(folder: configuration.journalFolder)
        try journal.putPendingMove(JournalPendingMove(privatePath: aside, realPath: Self.package, isStaging: false))
        try await devices.store.move(try #require(RemotePath(Self.package)), to: try #require(RemotePath(aside)), condition: .unconditional)
        // Meanwhile B sees the package missing, and must not delete its copy.
        let meanwhile = await devices.b.syncOnce()
        #expect(meanwhile.failed.allSatisfy { if case .deferred = $0.error { true } else { false } })
        #expect(Self.files(devices, on: devices.b) == contents)
        // A restarts: the package is put back on the server, and nothing is lost anywhere.
        let restarted = try SyncEngine(configuration: configuration, store: devices.store)
        let recovery = await restarted.syncOnce()
        #expect(recovery.failed.isEmpty, "\(recovery.failed)")
        #expect(Self.serverFiles(devices.store) == Set(contents.keys))
        #expect(!devices.store.paths.contains { $0.hasPrefix(".clouddocsd") })
        #expect(Self.files(devices, on: devices.a) == contents)
        await devices.sync(devices.b)
        #expect(Self.files(devices, on: devices.b) == contents)
        withExtendedLifetime(journal) {}
    }

    @Test("a staging folder left by a killed upload is removed at restart, and the upload then goes once")
    func leftoverStaging() async throws {
        let devices = try Self.devices()
        try Self.writePackage(devices, on: devices.a, files: ["index.txt": "v1"])
        let configuration = devices.a.configuration
        let staging = ".clouddocsd-staging-test"
        let journal = try SyncJournal(folder: configuration.journalFolder)
        try journal.putPendingMove(JournalPendingMove(privatePath: staging, realPath: Self.package, isStaging: true))
        devices.store.put("half", at: staging + "/index.txt")
        let restarted = try SyncEngine(configuration: configuration, store: devices.store)
        let pass = await restarted.syncOnce()
        #expect(pass.failed.isEmpty, "\(pass.failed)")
        #expect(devices.store.paths.sorted() == [Self.package, Self.package + "/index.txt"])
        #expect(devices.store.data(at: Self.package + "/index.txt") == Data("v1".utf8))
        withExtendedLifetime(journal) {}
    }

    @Test("a package synced file by file before is taken over as one item without a conflict")
    func takesOverFileByFileJournal() async throws {
        let devices = try TwoDevices()
        try Self.writePackage(devices, on: devices.a, files: ["index.txt": "v1"])
        var plain = devices.a.configuration
        plain.packageExtensions = []
        let before = try SyncEngine(configuration: plain, store: devices.store)
        let fileByFile = await before.syncOnce()  // no package extension: synced file by file
        #expect(fileByFile.plan.steps.contains(.upload(Self.package + "/index.txt")))
        var packaged = devices.a.configuration
        packaged.packageExtensions = [Self.pathExtension]
        let restarted = try SyncEngine(configuration: packaged, store: devices.store)
        let pass = await restarted.syncOnce()
        #expect(pass.failed.isEmpty, "\(pass.failed)")
        #expect(pass.plan.steps == [.conflict(Self.package)])
        #expect(try FileVersion.unresolvedConflictVersionsOfItem(at: devices.url(devices.a, Self.package)).isEmpty)
        #expect(await restarted.syncOnce().plan.steps.isEmpty)
    }
}
