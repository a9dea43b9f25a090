import FileCoordination
import Foundation
import LocalServers
import Testing
import TestSupport
@testable import SyncAgent

/// Package documents through a real Apache `mod_dav` (`FileETag Digest`): the staging folder and
/// the aside rename are real collection `MOVE`s, and the tags read after Apache's tag-less `PUT`
/// answers are verified by their SHA-1 (no extra pass).
@Suite("Sync engine: package documents through Apache mod_dav", .serialized,
       .enabled(if: RequiredTool.apache2.isInstalledOrRequired, Comment(rawValue: RequiredTool.apache2.missingMessage)))
struct EnginePackageApacheTests {
    @Test("Apache FileETag Digest: a package goes from A to B whole, an edit replaces it, concurrent edits are one conflict version; nothing private is left")
    func packageThroughApache() async throws {
        try await Self.exercise(.apache(fileETag: "Digest"), digestTags: true)
    }

    @Test("Apache FileETag MTime Size (safe mode): the same")
    func packageThroughApacheSafeMode() async throws {
        try await Self.exercise(.apache(fileETag: "MTime Size"), digestTags: false)
    }

    @Test("WsgiDAV (tags that change with the path): the same",
          .enabled(if: RequiredTool.wsgidav.isInstalledOrRequired, Comment(rawValue: RequiredTool.wsgidav.missingMessage)))
    func packageThroughWsgiDAV() async throws {
        try await Self.exercise(.wsgidav, digestTags: false)
    }

    /// `digestTags`: the server's tags are SHA-1 digests, so an upload needs no second look.
    static func exercise(_ kind: WebDAVServer.Kind, digestTags: Bool) async throws {
        Coordinator.registerPackageExtension(EnginePackageTests.pathExtension)
        let package = EnginePackageTests.package
        try await WebDAVServer.with(kind) { server in
            let scratch = try Scratch("engine-package-apache")
            defer { scratch.remove() }
            let store = try WebDAVStore(configuration: WebDAVConfiguration(baseURL: server.baseURL))
            _ = try await store.probe()
            var engines: [SyncEngine] = []
            for device in ["A", "B"] {
                let root = scratch.url.appending(path: device)
                try FileManager.default.createDirectory(at: root.appending(path: TwoDevices.identifier), withIntermediateDirectories: true)
                var configuration = TwoDevices.configuration(root, SyncGuards(), .seconds(3600))
                configuration.packageExtensions = [EnginePackageTests.pathExtension]
                engines.append(try SyncEngine(configuration: configuration, store: store))
            }
            let (a, b) = (engines[0], engines[1])
            func url(_ engine: SyncEngine, _ path: String) -> URL { engine.configuration.containerURL.appending(path: path) }
            func write(_ text: String, _ path: String, on engine: SyncEngine) throws {
                let target = url(engine, path)
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: target)
            }
            func read(_ path: String, on engine: SyncEngine) -> String? {
                (try? Data(contentsOf: url(engine, path))).map { String(decoding: $0, as: UTF8.self) }
            }
            func sync(_ engine: SyncEngine, sourceLocation: SourceLocation = #_sourceLocation) async -> SyncPassReport {
                let report = await engine.syncOnce()
                #expect(report.failed.isEmpty, "\(report.failed)", sourceLocation: sourceLocation)
                return report
            }

            try write("v1", package + "/index.txt", on: a)
            try write("A", package + "/media/a.txt", on: a)
            #expect(await sync(a).plan.steps == [.upload(package)])
            // Apache's PUT answers carry no tag: the tags read afterwards were verified by their
            // digest, so nothing is left to compare. (Elsewhere a second look may compare once.)
            let second = await sync(a)
            if digestTags { #expect(second.plan.steps.isEmpty) }
            #expect(await sync(a).plan.steps.isEmpty)
            #expect(await sync(b).plan.steps == [.download(package)])
            #expect(read(package + "/media/a.txt", on: b) == "A")

            try write("v2", package + "/index.txt", on: a)
            try FileManager.default.removeItem(at: url(a, package + "/media/a.txt"))
            #expect(await sync(a).plan.steps == [.upload(package)])
            _ = await sync(a)
            #expect(await sync(b).plan.steps == [.download(package)])
            #expect(read(package + "/index.txt", on: b) == "v2")
            #expect(read(package + "/media/a.txt", on: b) == nil)

            try write("edit A", package + "/index.txt", on: a)
            try write("edit B", package + "/index.txt", on: b)
            _ = await sync(a)
            #expect(await sync(b).plan.steps == [.conflict(package)])
            _ = await sync(a)
            for engine in [a, b] {
                #expect(read(package + "/index.txt", on: engine) == "edit A")
                let versions = try FileVersion.unresolvedConflictVersionsOfItem(at: url(engine, package))
                #expect(versions.count == 1)
                if let version = versions.first {
                    #expect(try String(contentsOf: version.url.appending(path: "index.txt"), encoding: .utf8) == "edit B")
                }
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: server.dataURL.path)
            #expect(!names.contains { $0.hasPrefix(".clouddocsd-aside") || $0.hasPrefix(".clouddocsd-staging") }, "\(names)")
        }
    }
}
