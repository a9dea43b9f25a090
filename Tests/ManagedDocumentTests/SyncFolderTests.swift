import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// Logs and baselines as files in a container's data scope: convergence through real files,
/// baselines and compaction, damaged and truncated logs, newer schemas, a reset container.
@Suite struct SyncFolderTests {
    static func synchronizer(_ device: String, scratch: Scratch, container: URL, schema: ManagedSchema = TestSchemas.items,
                             baselineInterval: UInt64 = 100, start: UInt64 = 1_764_000_000_000) throws -> StoreSynchronizer {
        try StoreSynchronizer(storePath: scratch.path + "/\(device)-\(schema.version).sqlite", schema: schema, device: device,
                              folder: LogFolder(contentURL: container, storeName: "Todos", device: device), durable: false,
                              baselineInterval: baselineInterval, now: SteppingWallClock(start: start).now)
    }

    static func ids(_ synchronizer: StoreSynchronizer) throws -> [ManagedObjectID] {
        try synchronizer.withStore { store throws(ManagedStoreError) in try store.fetch(FetchRequest(entityName: "Item")).map(\.objectID) }
    }

    @Test func devicesSharingOneFolderConvergeThroughBaselinesAndCompaction() throws {
        let scratch = try Scratch("managed-folder")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        var random = SplitMix64(seed: 42)
        let devices = try ["a", "b", "c"].enumerated().map {
            try Self.synchronizer($0.element, scratch: scratch, container: container, baselineInterval: 4,
                                  start: 1_764_000_000_000 + UInt64($0.offset) * 777)
        }
        var failures: [ManagedStoreError] = []
        for _ in 0..<30 {
            for device in devices {
                if Bool.random(using: &random) { failures += device.importChanges().failures }
                let known = try Self.ids(device)
                try device.withStore { store throws(ManagedStoreError) in
                    for step in 0..<Int.random(in: 1..<8, using: &random) {
                        if known.isEmpty || step % 3 == 0 {
                            try store.insert("Item", ["title": .string("t\(step)")])
                        } else if step % 5 == 0, let id = known.randomElement(using: &random) {
                            try? store.delete(id)
                        } else if let id = known.randomElement(using: &random) {
                            try? store.update(id, ["count": .integer(Int64(step))])
                        }
                    }
                }
                failures += try device.save()
            }
        }
        for device in devices { failures += device.importChanges().failures }
        for device in devices { failures += device.importChanges().failures }
        #expect(failures.isEmpty, "\(failures)")
        let dumps = try devices.map { try $0.withStore { store throws(ManagedStoreError) in try store.dump() } }
        #expect(dumps[0] == dumps[1] && dumps[1] == dumps[2])

        // Compaction removed logs every device had, and kept one baseline per device at most.
        let entries = LogFolder(contentURL: container, storeName: "Todos", device: "a").entries() ?? []
        #expect(entries.filter { $0.kind == .log }.count < 90)
        for device in ["a", "b", "c"] {
            #expect(entries.filter { $0.kind == .baseline && $0.device == device }.count <= 1)
        }
        // A device that arrives now gets the same store from the baselines and remaining logs.
        let newcomer = try Self.synchronizer("d", scratch: scratch, container: container)
        #expect(newcomer.importChanges().failures.isEmpty)
        #expect(try newcomer.withStore { store throws(ManagedStoreError) in try store.dump() } == dumps[0])
    }

    @Test func damagedAndTruncatedLogsAreReportedSkippedAndTheRestApplied() throws {
        let scratch = try Scratch("managed-damaged")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let writer = try Self.synchronizer("a", scratch: scratch, container: container)
        for index in 0..<3 {
            try writer.withStore { store throws(ManagedStoreError) in _ = try store.insert("Item", ["title": .string("log \(index)")]) }
            try writer.save()
        }
        let folder = LogFolder(contentURL: container, storeName: "Todos", device: "a")
        let logs = (folder.entries() ?? []).sorted { $0.sequence < $1.sequence }
        try #require(logs.count == 3)
        // Log 1 damaged (one byte flipped), log 2 truncated (a sync tool still writing it).
        var damaged = try Data(contentsOf: folder.url(of: logs[0]))
        damaged[damaged.count / 2] ^= 0xFF
        try damaged.write(to: folder.url(of: logs[0]))
        let whole = try Data(contentsOf: folder.url(of: logs[1]))
        try whole.prefix(whole.count - 7).write(to: folder.url(of: logs[1]))

        let reader = try Self.synchronizer("b", scratch: scratch, container: container)
        let outcome = reader.importChanges()
        #expect(outcome.summary.inserted.count == 1)
        #expect(outcome.failures.count == 2)
        #expect(outcome.failures.allSatisfy { if case .unreadableLog = $0 { true } else { false } })
        // Reported once, not at every pass.
        #expect(reader.importChanges().failures.isEmpty)
        // The truncated log completes (the sync tool finished): it is applied.
        try whole.write(to: folder.url(of: logs[1]))
        #expect(reader.importChanges().summary.inserted.count == 1)
        #expect(try Self.ids(reader).count == 2)
    }

    @Test func aLogFromANewerSchemaIsKeptAndAppliedAfterTheUpgrade() throws {
        let scratch = try Scratch("managed-schema")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let newer = try Self.synchronizer("a", scratch: scratch, container: container, schema: TestSchemas.itemsVersion2)
        try newer.withStore { store throws(ManagedStoreError) in _ = try store.insert("Item", ["title": "new", "priority": 3]) }
        try newer.save()

        let older = try Self.synchronizer("b", scratch: scratch, container: container)
        let outcome = older.importChanges()
        #expect(outcome.summary.isEmpty)
        guard case .logFromNewerSchema(_, found: 2, supported: 1)? = outcome.failures.first else {
            Issue.record("expected a newer-schema refusal, got \(outcome.failures)")
            return
        }
        // The same device's program, updated, reads its store (upgraded) and the kept log.
        let upgraded = try StoreSynchronizer(storePath: scratch.path + "/b-1.sqlite", schema: TestSchemas.itemsVersion2, device: "b",
                                             folder: LogFolder(contentURL: container, storeName: "Todos", device: "b"), durable: false)
        #expect(upgraded.importChanges().summary.inserted.count == 1)
        let priority = try upgraded.withStore { store throws(ManagedStoreError) in try store.fetch(FetchRequest(entityName: "Item")).first?["priority"] }
        #expect(priority == .integer(3))
        // And the old program now refuses the upgraded store clearly.
        #expect(throws: ManagedStoreError.newerSchema(found: 2, supported: 1)) {
            _ = try RecordStore(path: scratch.path + "/b-1.sqlite", schema: TestSchemas.items, device: "b", durable: false)
        }
    }

    @Test func aResetContainerIsDetectedAndTheStoreRepublished() throws {
        let scratch = try Scratch("managed-reset")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let device = try Self.synchronizer("a", scratch: scratch, container: container)
        try device.withStore { store throws(ManagedStoreError) in
            for index in 0..<5 { try store.insert("Item", ["title": .string("kept \(index)")]) }
        }
        try device.save()
        try FileManager.default.removeItem(at: container.appending(path: "ManagedDocuments"))

        let outcome = device.importChanges()
        guard case .containerReset? = outcome.failures.first else {
            Issue.record("expected the reset to be reported, got \(outcome.failures)")
            return
        }
        #expect(device.importChanges().failures.isEmpty)  // once
        let fresh = try Self.synchronizer("b", scratch: scratch, container: container)
        #expect(fresh.importChanges().summary.inserted.count == 5)
    }

    @Test func anOwnLogWrittenBeforeACrashIsAppliedOnTheNextImport() throws {
        let scratch = try Scratch("managed-crash")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let folder = LogFolder(contentURL: container, storeName: "Todos", device: "a")
        let device = try Self.synchronizer("a", scratch: scratch, container: container)
        // What a save killed after writing its log and before committing leaves: the log, and a
        // store without the change.
        let stamp = HybridTimestamp(milliseconds: 1_764_000_100_000, counter: 0, device: "a")
        let id = UUID()
        let orphan = ChangeLogFile(kind: .log, schemaVersion: 1, device: "a", sequence: 1, writtenMilliseconds: 0, coverage: ["a": 1],
                                   changes: [RecordChange(entity: "Item", id: id, registers: [
                                       RecordChange.existence: Register(value: true, timestamp: stamp),
                                       "title": Register(value: "orphan", timestamp: stamp)])])
        _ = try folder.write(orphan.encoded(), kind: .log, sequence: 1)
        #expect(device.importChanges().summary.inserted == [ManagedObjectID(entity: "Item", uuid: id)])
        // The next save does not reuse sequence 1.
        try device.withStore { store throws(ManagedStoreError) in _ = try store.insert("Item", ["title": "after"]) }
        try device.save()
        #expect((folder.entries() ?? []).map(\.sequence).sorted() == [1, 2])
    }
}
