import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

@Suite struct HybridLogicalClockTests {
    @Test func ticksIncreaseWhateverTheWallClockDoes() {
        let readings = SteppingWallClock(start: 1_000, step: 0)  // a stuck clock
        var clock = HybridLogicalClock(device: "a", now: readings.now)
        let first = clock.tick(), second = clock.tick()
        #expect(first < second && second.milliseconds == 1_000 && second.counter == first.counter + 1)
        // A timestamp from a device whose clock is ahead: the next local write is later still.
        clock.observe(HybridTimestamp(milliseconds: 5_000, counter: 7, device: "b"))
        let third = clock.tick()
        #expect(third.milliseconds == 5_000 && third.counter == 8)
        // The counter carries into the milliseconds instead of wrapping.
        clock.observe(HybridTimestamp(milliseconds: 6_000, counter: .max, device: "b"))
        let fourth = clock.tick()
        #expect(fourth.milliseconds == 6_001 && fourth.counter == 0)
    }

    @Test func equalTimesAreOrderedByDevice() {
        let low = HybridTimestamp(milliseconds: 1, counter: 0, device: "a"), high = HybridTimestamp(milliseconds: 1, counter: 0, device: "b")
        #expect(low < high && MergeRules.incomingWins(high, over: low) && !MergeRules.incomingWins(low, over: high))
        #expect(!MergeRules.incomingWins(low, over: low))
    }
}

@Suite struct ChangeLogFormatTests {
    static let sample: ChangeLogFile = {
        let stamp = HybridTimestamp(milliseconds: 1_764_000_000_000, counter: 3, device: "dev-1")
        let values: [AttributeValue] = [.null, "text é", .integer(-42), .double(2.5), .bool(true),
                                        .date(Date(timeIntervalSince1970: 1_764_000_000.25)), .data(Data([0, 1, 255])),
                                        .uuid(UUID(uuidString: "6F1C1E46-8B0A-4C3A-9D2E-2F1D2B3C4D5E") ?? UUID())]
        var registers: [String: Register] = [RecordChange.existence: Register(value: true, timestamp: stamp)]
        for (index, value) in values.enumerated() { registers["a\(index)"] = Register(value: value, timestamp: stamp) }
        return ChangeLogFile(kind: .log, schemaVersion: 3, device: "dev-1", sequence: 9, writtenMilliseconds: 1_764_000_000_000,
                             coverage: ["dev-1": 9, "dev-2": 4], changes: [RecordChange(entity: "Item", id: UUID(), registers: registers)])
    }()

    @Test func roundTripsEveryValueType() throws {
        let bytes = Self.sample.encoded()
        #expect(try ChangeLogFile.decode(bytes) == Self.sample)
        #expect(String(decoding: bytes.prefix(28), as: UTF8.self) == "ManagedDocuments change log\n")
    }

    @Test func everyTruncationAndEveryFlippedByteIsRefusedWithoutATrap() {
        let bytes = Self.sample.encoded()
        for length in 0..<bytes.count {
            #expect(throws: LogReader.Damaged.self) { try ChangeLogFile.decode(Array(bytes.prefix(length))) }
        }
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x5A
            #expect(throws: LogReader.Damaged.self) { try ChangeLogFile.decode(damaged) }
        }
    }

    @Test func aLaterFormatIsRefused() throws {
        var bytes = Self.sample.encoded()
        let format = 28 + ChangeLogFile.magic.count
        bytes[format] = ChangeLogFile.currentFormat + 1
        let checked = bytes.count - 8
        var crc = LogWriter()
        crc.u32(CRC32.checksum(bytes[0..<checked]))
        bytes.replaceSubrange(checked..<checked + 4, with: crc.bytes)
        #expect { try ChangeLogFile.decode(bytes) } throws: { ($0 as? LogReader.Damaged)?.reason.contains("newer") == true }
    }

    @Test func crc32IsTheStandardOne() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}

@Suite struct MergeRuleTests {
    static func store(_ scratch: Scratch, _ device: String, start: UInt64) throws -> RecordStore {
        try RecordStore(path: scratch.path + "/\(device).sqlite", schema: TestSchemas.items, device: device, durable: false,
                        now: SteppingWallClock(start: start).now)
    }

    /// Saves both stores, then applies each one's changes to the other (concurrent edits).
    static func exchange(_ one: RecordStore, _ other: RecordStore) throws {
        let (first, second) = (one.pending, other.pending)
        try one.commit()
        try other.commit()
        _ = try apply(first, to: other)
        _ = try apply(second, to: one)
    }

    /// Applies `store`'s pending changes to `other` (which has none) and commits both.
    static func deliver(_ store: RecordStore, to other: RecordStore) throws -> ImportSummary {
        let changes = store.pending
        try store.commit()
        return try apply(changes, to: other)
    }

    static func apply(_ changes: [RecordChange], to other: RecordStore) throws -> ImportSummary {
        try other.beginIfNeeded()
        var effects = ImportEffects()
        for change in changes { effects.record(try other.apply(change), for: ManagedObjectID(entity: change.entity, uuid: change.id)) }
        try other.commit()
        return effects.summary
    }

    @Test func aDeleteWinsOverAConcurrentLaterUpdateAndAnInsertRevives() throws {
        let scratch = try Scratch("managed-rules")
        defer { scratch.remove() }
        let a = try Self.store(scratch, "a", start: 1_000), b = try Self.store(scratch, "b", start: 9_000)  // b's clock is ahead
        let id = try a.insert("Item", ["title": "x"])
        _ = try Self.deliver(a, to: b)
        try a.delete(id)
        try b.update(id, ["title": "edited later"])
        try Self.exchange(a, b)
        for store in [a, b] { #expect(try store.count("Item") == 0) }
        #expect(try a.dump() == b.dump())
        // The edit is kept in the tombstone, not lost.
        #expect(try a.registers(of: id)?["title"]?.value == "edited later")
    }

    @Test func anUpdateBeforeItsInsertStaysInvisibleUntilTheInsertArrives() throws {
        let scratch = try Scratch("managed-rules-order")
        defer { scratch.remove() }
        let a = try Self.store(scratch, "a", start: 1_000), b = try Self.store(scratch, "b", start: 1_000), c = try Self.store(scratch, "c", start: 1)
        let id = try a.insert("Item", ["title": "first"])
        let insert = a.pending
        _ = try Self.deliver(a, to: b)
        try b.update(id, ["count": 5])
        let update = b.pending
        try b.commit()
        // c hears the update first.
        try c.beginIfNeeded()
        #expect(try c.apply(update[0]) == .none)
        #expect(try c.count("Item") == 0)
        #expect(try c.apply(insert[0]) == .inserted)
        try c.commit()
        #expect(try c.fetch(FetchRequest(entityName: "Item")).first?["count"] == 5)
        #expect(try c.dump() == b.dump())
    }

    @Test func uniqueValuesInsertedOnTwoDevicesAreOneRecord() throws {
        let scratch = try Scratch("managed-rules-unique")
        defer { scratch.remove() }
        let a = try Self.store(scratch, "a", start: 1_000), b = try Self.store(scratch, "b", start: 2_000)
        let fromA = try a.insert("Setting", ["key": "theme", "value": 1])
        let fromB = try b.insert("Setting", ["key": "theme", "value": 2])
        #expect(fromA == fromB)
        #expect(UniqueIdentity.id(entity: "Setting", uniqueValue: "theme").uuidString.dropFirst(14).first == "8")
        try Self.exchange(a, b)
        for store in [a, b] {
            let settings = try store.fetch(FetchRequest(entityName: "Setting"))
            #expect(settings.count == 1 && settings.first?["value"] == 2)
        }
        #expect(throws: ManagedStoreError.uniqueAttributeImmutable(entity: "Setting", attribute: "key")) {
            try a.update(fromA, ["key": "colour"])
        }
    }

    @Test func aFileThatIsNotADatabaseIsAnErrorValue() throws {
        let scratch = try Scratch("managed-notadb")
        defer { scratch.remove() }
        let path = scratch.file("junk.sqlite", contents: String(repeating: "not a database ", count: 200)).path
        #expect { _ = try RecordStore(path: path, schema: TestSchemas.items, device: "a") } throws: { error in
            guard case .database(let failure)? = error as? ManagedStoreError else { return false }
            return failure.isCorruption
        }
    }
}
