import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// The merge's promise: devices that have applied the same logs hold the same store, whatever
/// the order, duplicates and delays of the logs.
@Suite struct MergeConvergenceTests {
    /// One simulated device: its store, the records it knows of, and the logs delivered to it.
    final class Device {
        let name: String
        let store: RecordStore
        var known: [ManagedObjectID] = []
        var delivered: Set<Int> = []

        init(name: String, path: String, clock: SteppingWallClock) throws {
            self.name = name
            store = try RecordStore(path: path, schema: TestSchemas.items, device: name, durable: false, now: clock.now)
        }

        func receive(_ log: (name: String, bytes: [UInt8])) throws {
            let file = try ChangeLogFile.decode(log.bytes)
            let summary = try store.applyFile(file, name: log.name)
            try store.commit()
            known += summary.inserted.filter { $0.entity == "Item" }
        }
    }

    /// Runs `work`, ignoring ``ManagedStoreError/recordNotFound(_:)`` (the record was deleted
    /// by an import meanwhile: the edit is simply not possible any more).
    static func ignoringDeleted(_ work: () throws(ManagedStoreError) -> Void) throws {
        do { try work() } catch {
            if case .recordNotFound = error { return }
            throw error
        }
    }

    /// A minute of CPU in a debug build: it runs on a thread of its own, not on one of the
    /// cooperative pool's (as many as cores), which it would hold from every other test's tasks.
    @Test func threeDevicesConvergeWithRandomConcurrentChangesAndDelivery() async throws {
        let outcome: Result<Void, any Error> = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Result { try Self.convergeThreeDevices() }) }.start()
        }
        try outcome.get()
    }

    private static func convergeThreeDevices() throws {
        let scratch = try Scratch("managed-convergence")
        defer { scratch.remove() }
        var random = SplitMix64(seed: 0x5EED_2026)
        // Skewed wall clocks: device b is 5 s behind, c 3 s ahead.
        let devices = try [("a", 1_764_000_000_000 as UInt64), ("b", 1_763_999_995_000), ("c", 1_764_000_003_000)].map {
            try Device(name: $0.0, path: scratch.path + "/\($0.0).sqlite", clock: SteppingWallClock(start: $0.1))
        }
        var published: [(name: String, bytes: [UInt8])] = []
        var sequences = [0, 0, 0]
        var inserted = 0

        for _ in 0..<140 {
            for (index, device) in devices.enumerated() {
                // Some of what was published so far arrives, in a random order, some of it twice.
                let candidates = published.indices.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }.shuffled(using: &random)
                for log in candidates where !published[log].name.hasPrefix(device.name + "/") {
                    try device.receive(published[log])
                    device.delivered.insert(log)
                }
                // Concurrent local edits.
                for _ in 0..<Int.random(in: 20..<50, using: &random) {
                    let roll = Int.random(in: 0..<100, using: &random)
                    if roll < 70 || device.known.isEmpty {
                        let id = try device.store.insert("Item", ["title": .string("item \(inserted)"),
                                                                  "count": .integer(Int64(roll))])
                        device.known.append(id)
                        inserted += 1
                    } else if roll < 88 {
                        let id = device.known[Int.random(in: 0..<device.known.count, using: &random)]
                        let values: [String: AttributeValue] = roll % 2 == 0
                            ? ["title": .string("edited by \(device.name) \(roll)")]
                            : ["count": .integer(Int64(roll)), "done": .bool(true), "note": roll % 3 == 0 ? .null : .string("n\(roll)")]
                        try ignoringDeleted { () throws(ManagedStoreError) in try device.store.update(id, values) }
                    } else if roll < 96 {
                        let id = device.known[Int.random(in: 0..<device.known.count, using: &random)]
                        try ignoringDeleted { () throws(ManagedStoreError) in try device.store.delete(id) }
                    } else {
                        // Singletons inserted on several devices must stay single.
                        _ = (try device.store.insert("Setting", ["key": .string("theme-\(roll % 3)"),
                                                                                "value": .integer(Int64(roll))]))
                    }
                }
                // The save: its changes become one log.
                sequences[index] += 1
                let file = ChangeLogFile(kind: .log, schemaVersion: 1, device: device.name, sequence: UInt64(sequences[index]),
                                         writtenMilliseconds: 0, coverage: try device.store.coverage(), changes: device.store.pending)
                let name = "\(device.name)/\(sequences[index]).mdlog"
                try device.store.markApplied(name, device: device.name, sequence: UInt64(sequences[index]))
                try device.store.commit()
                published.append((name, file.encoded()))
            }
        }
        #expect(inserted >= 10_000)

        // Late delivery: everything not yet delivered, shuffled, with duplicates.
        for device in devices {
            var remaining = published.indices.filter { !device.delivered.contains($0) && !published[$0].name.hasPrefix(device.name + "/") }
            remaining += remaining.prefix(remaining.count / 4)
            for log in remaining.shuffled(using: &random) { try device.receive(published[log]) }
        }

        let dumps = try devices.map { try $0.store.dump() }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[1] == dumps[2])
        let counts = try devices.map { try $0.store.count("Item") }
        #expect(counts[0] == counts[1] && counts[1] == counts[2])
        #expect(counts[0] > 5_000)
        // Three singleton keys at most, however many devices inserted them.
        #expect(try devices[0].store.count("Setting") <= 3)

        // A new device given only a baseline of device a's store ends the same.
        let baseline = ChangeLogFile(kind: .baseline, schemaVersion: 1, device: "a", sequence: 0, writtenMilliseconds: 0,
                                     coverage: try devices[0].store.coverage(), changes: try devices[0].store.allRecords())
        let newcomer = try Device(name: "d", path: scratch.path + "/d.sqlite", clock: SteppingWallClock(start: 1))
        try newcomer.receive(("a/baseline-1.mdbase", ChangeLogFile.decode(baseline.encoded()).encoded()))
        #expect(try newcomer.store.dump() == dumps[0])
    }
}
