import Foundation
import Testing
import TestSupport
@testable import SyncAgent

/// Local change detection from inotify: while ``SyncEngine/run()`` runs with its watcher, a pass
/// reads only the folders the watcher reported (``LocalScanState``), so an idle pass `lstat`s
/// nothing; every kind of change is still found.
@Suite("SyncEngine: local changes come from inotify, not from walking the container")
struct EngineChangeDetectionTests {
    /// Starts a pass through `syncNow()` and waits until it finished (the status's last sync moved).
    static func pass(_ engine: SyncEngine) async throws {
        let before = await engine.status.lastSync
        await engine.syncNow()
        try await Polling.until("a pass after syncNow()") { await engine.status.lastSync != before }
    }

    /// Runs passes until one reads nothing: the watcher's own reports of the engine's work settle first.
    static func untilIdlePassReadsNothing(_ engine: SyncEngine) async throws {
        try await Polling.until("an idle pass that lstat's no entry") {
            try await pass(engine)
            let state = await engine.localState
            return !state.lastWasFull && state.lastExamined == 0
        }
    }

    @Test("an idle pass lstat's no entry; an edit, a new folder tree, a rename and a deletion are still found")
    func idlePassIsCheap() async throws {
        let devices = try TwoDevices()
        let engine = devices.a
        for folder in 0..<5 {
            for file in 0..<20 { try devices.write("text \(folder)-\(file)", "d\(folder)/n\(file).txt", on: engine) }
        }
        let running = Task { await engine.run() }
        // 100 uploads, each journalled with an fsync: on a loaded CI disk (the suite's other
        // tests fsync too) that may take longer than the usual hang guard, which only bounds a
        // failure. The engine's progress is what is awaited, not a time.
        try await Polling.until("the first upload of 100 files", timeout: .seconds(600), details: {
            "on the server: \(devices.store.paths.count) items"
        }) { devices.store.data(at: "d4/n19.txt") != nil
            && (0..<5).allSatisfy { folder in (0..<20).allSatisfy { devices.store.data(at: "d\(folder)/n\($0).txt") != nil } } }
        try await Self.untilIdlePassReadsNothing(engine)

        try devices.write("an edit of a different size", "d2/n3.txt", on: engine)
        try await Polling.until("the edit uploaded") { devices.store.data(at: "d2/n3.txt") == Data("an edit of a different size".utf8) }
        try await Self.untilIdlePassReadsNothing(engine)

        try devices.write("deep", "new/sub/deeper/b.txt", on: engine)
        try await Polling.until("the new folder tree uploaded") { devices.store.data(at: "new/sub/deeper/b.txt") != nil }

        try FileManager.default.moveItem(at: devices.url(engine, "d1"), to: devices.url(engine, "moved"))
        try devices.write("in a moved folder", "moved/late.txt", on: engine)
        // The new file and the moved ones may go in different passes: wait for both.
        try await Polling.until("the moved folder's files on the server") {
            devices.store.data(at: "moved/late.txt") != nil && devices.store.data(at: "moved/n0.txt") != nil
        }

        try FileManager.default.removeItem(at: devices.url(engine, "d4/n1.txt"))
        try await Polling.until("the deletion carried out") { devices.store.data(at: "d4/n1.txt") == nil }
        try await Self.untilIdlePassReadsNothing(engine)
        running.cancel()
        await running.value
    }

    @Test("without a watcher (syncOnce alone) every pass is a full scan")
    func withoutWatcherEveryPassIsFull() async throws {
        let devices = try TwoDevices()
        try devices.write("x", "a.txt", on: devices.a)
        await devices.sync(devices.a)
        await devices.sync(devices.a)
        let state = await devices.a.localState
        #expect(state.lastWasFull)
        #expect(state.lastExamined == 1)
    }
}
