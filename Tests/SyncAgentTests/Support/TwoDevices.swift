import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// Two "devices" for the engine's tests: two containers' roots (`A/`, `B/`) with the container
/// `com.example.notes` each, an engine per device, one shared ``InMemoryRemoteStore``.
/// Passes are run explicitly (``sync(_:)``), so each test decides the interleaving.
final class TwoDevices: Sendable {
    static let identifier = "com.example.notes"
    let scratch: Scratch
    let store: InMemoryRemoteStore
    let a: SyncEngine
    let b: SyncEngine

    init(guards: SyncGuards = SyncGuards(), store: InMemoryRemoteStore = InMemoryRemoteStore(),
         pollInterval: Duration = .seconds(3600)) throws {
        scratch = try Scratch("sync-engine")
        self.store = store
        for device in ["A", "B"] {
            try FileManager.default.createDirectory(at: scratch.url.appending(path: "\(device)/\(Self.identifier)"),
                                                    withIntermediateDirectories: true)
        }
        a = try SyncEngine(configuration: Self.configuration(scratch.url.appending(path: "A"), guards, pollInterval), store: store)
        b = try SyncEngine(configuration: Self.configuration(scratch.url.appending(path: "B"), guards, pollInterval), store: store)
    }

    /// Polls once an hour by default: tests that run ``SyncEngine/run()`` see passes started by
    /// `syncNow()` or by local changes, never by the clock.
    static func configuration(_ root: URL, _ guards: SyncGuards, _ pollInterval: Duration) -> SyncEngineConfiguration {
        SyncEngineConfiguration(identifier: identifier, root: root, guards: guards, pollInterval: pollInterval,
                                coordinationTimeout: .seconds(60))
    }

    /// The container folder of device `a` or `b`.
    func container(_ engine: SyncEngine) -> URL { engine.configuration.containerURL }

    func url(_ engine: SyncEngine, _ path: String) -> URL { container(engine).appending(path: path) }

    /// Writes `text` to `path` on `engine`'s device (a plain write, as another program would).
    func write(_ text: String, _ path: String, on engine: SyncEngine) throws {
        let url = url(engine, path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func read(_ path: String, on engine: SyncEngine) -> String? {
        (try? Data(contentsOf: url(engine, path))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs one pass on `engine` and checks that no step failed.
    @discardableResult
    func sync(_ engine: SyncEngine, sourceLocation: SourceLocation = #_sourceLocation) async -> SyncPassReport {
        let report = await engine.syncOnce()
        #expect(report.failed.isEmpty, "failed steps: \(report.failed.map { "\($0.step): \($0.error)" })",
                sourceLocation: sourceLocation)
        return report
    }

    /// The texts of the unresolved conflict versions of `path` on `engine`'s device, sorted.
    func conflictTexts(_ path: String, on engine: SyncEngine) throws -> [String] {
        try FileVersion.unresolvedConflictVersionsOfItem(at: url(engine, path)).map { version in
            String(decoding: try Data(contentsOf: version.url), as: UTF8.self)
        }.sorted()
    }

    deinit { scratch.remove() }
}
