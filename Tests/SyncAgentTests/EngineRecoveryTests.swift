import FileCoordination
import Foundation
import Testing
import TestSupport
@testable import SyncAgent

@Suite("Sync engine: failures and control", .serialized)
struct EngineRecoveryTests {
    @Test("a server change between the listing and the upload is never overwritten: 412, then a conflict")
    func preconditionFailedBetweenListingAndUpload() async throws {
        let devices = try TwoDevices()
        try devices.write("base", "a.txt", on: devices.a)
        await devices.sync(devices.a)
        try devices.write("local edit", "a.txt", on: devices.a)
        devices.store.beforeNextUpload { state in InMemoryRemoteStore.put("someone else", at: "a.txt", in: &state) }
        let first = await devices.a.syncOnce()
        #expect(first.failed.count == 1)
        if case .remote(.preconditionFailed) = first.failed.first?.error {} else { Issue.record("not a 412: \(first.failed)") }
        #expect(devices.store.data(at: "a.txt") == Data("someone else".utf8))
        let second = await devices.sync(devices.a)
        #expect(second.plan.steps == [.conflict("a.txt")])
        #expect(devices.read("a.txt", on: devices.a) == "someone else")
        #expect(try devices.conflictTexts("a.txt", on: devices.a) == ["local edit"])
    }

    @Test("an upload that reached the server before a crash (journal not written) is recognised: no re-upload, no conflict")
    func uploadBeforeCrash() async throws {
        let devices = try TwoDevices()
        try devices.write("v1", "a.txt", on: devices.a)
        await devices.sync(devices.a)
        try devices.write("v2", "a.txt", on: devices.a)
        devices.store.put("v2", at: "a.txt")  // what the killed agent's PUT left on the server
        let uploads = devices.store.uploadCount
        await devices.sync(devices.a)
        #expect(devices.store.uploadCount == uploads)
        #expect(try devices.conflictTexts("a.txt", on: devices.a).isEmpty)
        #expect(await devices.a.syncOnce().plan.steps.isEmpty)
    }

    @Test("a killed agent's transfer files are removed at start, and its journal is reloaded")
    func restartAfterKill() async throws {
        let devices = try TwoDevices()
        try devices.write("x", "a.txt", on: devices.a)
        await devices.sync(devices.a)
        let configuration = devices.a.configuration
        let stale = configuration.transfersFolder.appending(path: "dead.download")
        try Data("half".utf8).write(to: stale)
        let restarted = try SyncEngine(configuration: configuration, store: devices.store)
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(await restarted.syncOnce().plan.steps.isEmpty)
    }

    @Test("run(): syncNow() starts a pass at once; pause() stops passes; cancelling ends run()")
    func runLoop() async throws {
        let devices = try TwoDevices()
        let engine = devices.a
        let running = Task { await engine.run() }
        try devices.write("x", "a.txt", on: engine)
        await engine.syncNow()
        try await Polling.until("the upload") { devices.store.data(at: "a.txt") != nil }
        await engine.pause()
        #expect(await engine.syncOnce().didNotRun)
        #expect(await engine.status.state == .paused)
        await engine.resume()
        running.cancel()
        await running.value
    }

    @Test("run(): a local change starts a pass without waiting for the poll (inotify), in new folders too")
    func localChangeTriggersPass() async throws {
        let devices = try TwoDevices()
        let engine = devices.a
        let running = Task { await engine.run() }
        try await Polling.until("the first pass") { await engine.status.lastSync != nil }
        try devices.write("x", "a.txt", on: engine)
        try await Polling.until("the upload of a.txt") { devices.store.data(at: "a.txt") != nil }
        try devices.write("y", "New/Deeper/b.txt", on: engine)
        try await Polling.until("the upload of New/Deeper/b.txt") { devices.store.data(at: "New/Deeper/b.txt") != nil }
        running.cancel()
        await running.value
    }

    @Test("the status lists transfers' progress and ends idle with the last sync time")
    func statusPublished() async throws {
        let devices = try TwoDevices()
        let seen = StatusLog()
        let engine = try SyncEngine(configuration: devices.a.configuration, store: devices.store) { seen.append($0) }
        try devices.write("hello", "a.txt", on: devices.a)
        await devices.sync(engine)
        let states = seen.all
        #expect(states.contains { $0.transfers.contains { $0.path == "a.txt" && $0.isUpload } })
        #expect(states.last?.state == .idle)
        #expect(states.last?.lastSync != nil)
        #expect(states.last?.transfers.isEmpty == true)
    }

    @Test("back-off doubles per failure with jitter, up to the maximum")
    func backoff() async throws {
        let devices = try TwoDevices()
        let engine = devices.a
        let first = await engine.backoff(afterFailures: 1), fifth = await engine.backoff(afterFailures: 5)
        let many = await engine.backoff(afterFailures: 40)
        #expect(first >= .milliseconds(500) && first <= .seconds(1))
        #expect(fifth >= .seconds(8) && fifth <= .seconds(16))
        #expect(many <= .seconds(300) && many >= .seconds(150))
    }
}

/// Statuses handed to the callback, in order. Sendable: a mutex guards the list.
final class StatusLog: Sendable {
    private let statuses = Locked<[ContainerSyncStatus]>([])
    func append(_ status: ContainerSyncStatus) { statuses.withLock { $0.append(status) } }
    var all: [ContainerSyncStatus] { statuses.withLock { $0 } }
}
