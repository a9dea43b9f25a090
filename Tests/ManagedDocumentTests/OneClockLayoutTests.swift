import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// Store layout 2 (one clock per record write, a blob only when a record's registers differ)
/// and log format 2 (one clock per change, varints), held to the behaviour of the layout and
/// format before them: every register and clock kept, older stores migrated, older logs read.
@Suite struct OneClockLayoutTests {
    static func store(_ scratch: Scratch, _ device: String, schema: ManagedSchema = TestSchemas.items,
                      start: UInt64 = 1_000) throws -> RecordStore {
        try RecordStore(path: scratch.path + "/\(device).sqlite", schema: schema, device: device, durable: false,
                        now: SteppingWallClock(start: start).now)
    }

    /// The row's clock columns of record `id`: `$clocks` is NULL while every register has the row's clock.
    static func clocksColumnIsNull(_ store: RecordStore, _ id: ManagedObjectID) throws -> Bool {
        let rows = try store.connection.rows("SELECT \"$clocks\" IS NULL FROM \"e_\(id.entity)\" WHERE id = ?",
                                             [.blob(withUnsafeBytes(of: id.uuid.uuid) { Data($0) })])
        return rows.first?.first == .integer(1)
    }

    @Test func anInsertIsOneClockAndAnUpdateOfSomeAttributesKeepsEachRegistersOwn() throws {
        let scratch = try Scratch("managed-one-clock")
        defer { scratch.remove() }
        let store = try Self.store(scratch, "a")
        let id = try store.insert("Item", ["title": "first", "count": 1])
        #expect(try Self.clocksColumnIsNull(store, id))
        let inserted = try #require(try store.registers(of: id))
        let stamp = try #require(inserted[RecordChange.existence]?.timestamp)
        #expect(inserted.values.allSatisfy { $0.timestamp == stamp } && inserted.count == 5)
        try store.update(id, ["count": 2])
        try store.commit()
        #expect(try !Self.clocksColumnIsNull(store, id))
        let updated = try #require(try store.registers(of: id))
        #expect(updated["count"]?.value == 2 && stamp < (updated["count"]?.timestamp ?? .zero))
        #expect(updated["title"] == inserted["title"] && updated[RecordChange.existence] == inserted[RecordChange.existence])
        // Another device applying the same changes holds the same registers.
        let other = try Self.store(scratch, "b")
        try other.beginIfNeeded()
        for change in try store.allRecords() { _ = try other.apply(change) }
        try other.commit()
        #expect(try other.dump() == store.dump())
    }

    /// A schema that adds an attribute to a table whose rows have one clock: the new attribute
    /// reads as never written (not as written with the row's clock).
    @Test func anAttributeAddedLaterIsNeverWrittenInOneClockRows() throws {
        let scratch = try Scratch("managed-one-clock-added")
        defer { scratch.remove() }
        var id: ManagedObjectID?
        do {
            let store = try Self.store(scratch, "a")
            id = try store.insert("Item", ["title": "old"])
            try store.commit()
        }
        let upgraded = try Self.store(scratch, "a", schema: TestSchemas.itemsVersion2, start: 5_000)
        let record = try #require(id)
        let registers = try #require(try upgraded.registers(of: record))
        #expect(registers["priority"] == .unwritten)
        #expect(registers["title"]?.value == "old" && registers["title"]?.timestamp != .zero)
        try upgraded.update(record, ["priority": 3])
        #expect(try upgraded.registers(of: record)?["priority"]?.value == 3)
    }

    /// A store of layout 1 with blob identifiers (three columns per register, a rowid table: the
    /// layout before this one) opens in layout 2 with every register and clock kept.
    @Test func aStoreOfLayoutOneIsMigratedWithItsClocks() throws {
        let scratch = try Scratch("managed-migrate-layout1")
        defer { scratch.remove() }
        let path = scratch.path + "/old.sqlite"
        let id = UUID(), tombstone = UUID()
        do {
            let connection = try SQLiteConnection(path: path, durable: false)
            try connection.execute(RecordTables.bookkeeping)
            let columns = ["$exists", "title", "count", "done", "note"].map { name in
                "\"\(name)\", \"\(name)$t\" INTEGER NOT NULL DEFAULT 0, \"\(name)$d\" INTEGER NOT NULL DEFAULT 0"
            }
            try connection.execute("CREATE TABLE \"e_Item\" (id BLOB PRIMARY KEY NOT NULL, \(columns.joined(separator: ", ")))")
            try connection.execute("INSERT INTO md_devices (number, name) VALUES (1, 'a'), (2, 'b')")
            let insert = """
                INSERT INTO "e_Item" (id, "$exists", "$exists$t", "$exists$d", "title", "title$t", "title$d",
                                      "count", "count$t", "count$d", "done", "done$t", "done$d")
                VALUES (?, ?, ?, 1, ?, ?, ?, 7, 65536, 1, 0, 65536, 1)
                """
            try connection.run(insert, [.blob(withUnsafeBytes(of: id.uuid) { Data($0) }), .integer(1), .integer(65536),
                                        .text("kept"), .integer(131_072), .integer(2)])
            try connection.run(insert, [.blob(withUnsafeBytes(of: tombstone.uuid) { Data($0) }), .integer(0), .integer(65536),
                                        .text("gone"), .integer(65536), .integer(1)])
            try connection.execute("INSERT INTO md_meta (key, value) VALUES ('schemaVersion', 1)")
        }
        let store = try RecordStore(path: path, schema: TestSchemas.items, device: "a", durable: false)
        let registers = try #require(try store.registers(of: ManagedObjectID(entity: "Item", uuid: id)))
        #expect(registers["title"] == Register(value: "kept", timestamp: HybridTimestamp(packed: 131_072, device: "b")))
        #expect(registers["count"] == Register(value: 7, timestamp: HybridTimestamp(packed: 65536, device: "a")))
        #expect(registers["note"] == .unwritten)
        #expect(try store.fetch(FetchRequest(entityName: "Item")).map(\.objectID.uuid) == [id])
        #expect(try store.registers(of: ManagedObjectID(entity: "Item", uuid: tombstone))?["title"]?.value == "gone")
        let columns = try RecordTables.columns(of: "Item", in: store.connection)
        #expect(columns.contains("$clocks") && !columns.contains("title$t"))
    }

    /// A log of format 1 (fixed-size fields, a clock per register), as the previous version
    /// wrote it, is still read.
    @Test func aLogOfFormatOneIsStillRead() throws {
        let stamp = HybridTimestamp(milliseconds: 1_764_000_000_000, counter: 3, device: "dev-1")
        let id = UUID()
        var writer = LogWriter()
        writer.bytes += Array("ManagedDocuments change log\n".utf8) + ChangeLogFile.magic
        writer.u8(1)  // format 1
        writer.u8(ChangeLogFile.Kind.log.rawValue)
        writer.u32(3)
        writer.string("dev-1")
        writer.u64(9)
        writer.u64(1_764_000_000_000)
        writer.u32(1)
        writer.string("dev-1")
        writer.u64(9)
        let names = ["Item", "$exists", "title", "count", "dev-1"]
        writer.u32(UInt32(names.count))
        for name in names { writer.string(name) }
        writer.u32(1)
        writer.u32(0)
        writer.uuid(id)
        writer.u16(3)
        for (name, value) in [(1, AttributeValue.bool(true)), (2, "text é"), (3, .integer(-42))] as [(UInt32, AttributeValue)] {
            writer.u32(name)
            writer.value(value)
            writer.u64(stamp.packed)
            writer.u32(4)
        }
        writer.u32(CRC32.checksum(writer.bytes))
        writer.bytes += ChangeLogFile.trailer
        let file = try ChangeLogFile.decode(writer.bytes)
        #expect(file.sequence == 9 && file.coverage == ["dev-1": 9])
        #expect(file.changes == [RecordChange(entity: "Item", id: id, registers: [
            RecordChange.existence: Register(value: true, timestamp: stamp),
            "title": Register(value: "text é", timestamp: stamp),
            "count": Register(value: -42, timestamp: stamp),
        ])])
    }

    /// Format 2's varints and own clocks: extreme integers, long strings and data, registers of
    /// one change written at different times.
    @Test func formatTwoRoundTripsExtremesAndMixedClocks() throws {
        let early = HybridTimestamp(milliseconds: 1_000, counter: 1, device: "a")
        let late = HybridTimestamp(milliseconds: 2_000, counter: 0, device: "b-device")
        let long = String(repeating: "x", count: 70_000)
        var changes: [RecordChange] = []
        for (index, value) in [AttributeValue.integer(.min), .integer(.max), .integer(0), .integer(-1), .integer(63), .integer(-64),
                               .integer(1 << 40), .string(long), .string(""), .data(Data(count: 300)), .data(Data())].enumerated() {
            changes.append(RecordChange(entity: "Item", id: UUID(), registers: [
                "a\(index)": Register(value: value, timestamp: index % 2 == 0 ? early : late),
                "b": Register(value: .null, timestamp: late),
                RecordChange.existence: Register(value: true, timestamp: early),
            ]))
        }
        let file = ChangeLogFile(kind: .baseline, schemaVersion: 1, device: "a", sequence: 1, writtenMilliseconds: 5,
                                 coverage: ["a": 1], changes: changes)
        #expect(try ChangeLogFile.decode(file.encoded()) == file)
    }

    /// Texts bound from the statement's arena (and, when too long for it, as SQLite's copies)
    /// are stored whole, including a NUL inside.
    @Test func textsOfEverySizeAreStoredWhole() throws {
        let scratch = try Scratch("managed-texts")
        defer { scratch.remove() }
        let store = try Self.store(scratch, "a")
        let texts = ["", "a", "with\u{0}nul", String(repeating: "é", count: 200), String(repeating: "y", count: 5_000),
                     String(repeating: "z", count: 100_000), "short again"]
        var ids: [ManagedObjectID] = []
        for text in texts { ids.append(try store.insert("Item", ["title": .string(text), "note": .string(text + "!")])) }
        try store.commit()
        for (id, text) in zip(ids, texts) {
            let registers = try #require(try store.registers(of: id))
            #expect(registers["title"]?.value == .string(text))
            #expect(registers["note"]?.value == .string(text + "!"))
        }
    }
}
