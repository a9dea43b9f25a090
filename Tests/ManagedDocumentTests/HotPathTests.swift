import CloudDocuments
import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// The insert-and-save hot path held to the slower, plainer ways it replaces: rows encoded in
/// one piece read back as the byte-by-byte encoding's, and the document is marked changed
/// whenever a change is not yet covered by a mark.
@Suite struct HotPathTests {
    static func store(_ scratch: Scratch, _ device: String, start: UInt64 = 1_000) throws -> RecordStore {
        try RecordStore(path: scratch.path + "/\(device).sqlite", schema: TestSchemas.items, device: device, durable: false,
                        now: SteppingWallClock(start: start).now)
    }

    /// Inserts encoded through the scratch buffer (short rows) and byte by byte (rows past its
    /// bound) decode to the values inserted, every register with the insert's clock.
    @Test func insertedRowsDecodeAsInserted() throws {
        let scratch = try Scratch("managed-hot-rows")
        defer { scratch.remove() }
        let store = try Self.store(scratch, "a")
        let rows: [[String: AttributeValue]] = [
            ["title": .string("short"), "count": .integer(7)],
            ["title": .string(""), "count": .integer(.min), "done": .bool(true), "note": .null],
            ["title": .string("é€😀 with\u{0}nul"), "count": .integer(.max), "note": .string("n")],
            ["title": .string(String(repeating: "long ", count: 600)), "note": .string(String(repeating: "x", count: 3_000))],
            ["title": .string(String(repeating: "z", count: ByteCursorBound.largest - 200)), "count": .integer(-1)],
            ["count": .integer(1 << 40)],
        ]
        var ids: [ManagedObjectID] = []
        for values in rows { ids.append(try store.insert("Item", values)) }
        let pending = store.pending
        try #require(pending.count == rows.count)
        let defaults: [String: AttributeValue] = ["title": .string(""), "count": .integer(0), "done": .bool(false), "note": .null,
                                                  RecordChange.existence: .bool(true)]
        for (index, change) in pending.enumerated() {
            #expect(change.entity == "Item")
            #expect(change.id == ids[index].uuid)
            var expected = defaults
            for (name, value) in rows[index] { expected[name] = value }
            #expect(change.registers.mapValues(\.value) == expected)
            #expect(Set(change.registers.values.map(\.timestamp)).count == 1)
        }
        // The committed store holds the same values.
        try store.commit()
        for (index, id) in ids.enumerated() {
            let registers = try #require(try store.registers(of: id))
            for (name, value) in rows[index] { #expect(registers[name]?.value == value) }
        }
    }

    /// The document is marked changed by the first change after a save, and by any change made
    /// while it counts as saved (here: told so by the app) although the store still holds
    /// unsaved changes.
    @MainActor @Test func changesMarkTheDocumentWheneverItCountsAsSaved() async throws {
        let scratch = try Scratch("managed-hot-marks")
        defer { scratch.remove() }
        let document = ManagedDocumentTests.document("a", scratch: scratch)
        try await document.openOrCreate()
        let context = document.managedObjectContext
        #expect(!document.hasUnsavedChanges)
        let first = try context.insert("Task", ["title": .string("one")])
        #expect(document.hasUnsavedChanges)
        try context.insert("Task", ["title": .string("two")])
        try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
        #expect(!document.hasUnsavedChanges)
        try context.update(first, ["done": .bool(true)])
        #expect(document.hasUnsavedChanges)
        document.updateChangeCount(.cleared)
        #expect(!document.hasUnsavedChanges)
        try context.delete(first)
        #expect(document.hasUnsavedChanges)
        try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
        #expect(!document.hasUnsavedChanges)
        #expect(try ManagedDocumentTests.titles(document) == ["two"])
        _ = await document.close()
    }

    /// The context keeps the store it changed last between changes: once its document closed, it
    /// refuses changes (nothing reaches the closed store), and a document opened again on the
    /// same package gets its changes in its own store.
    @MainActor @Test func theContextLetsGoOfAClosedStore() async throws {
        let scratch = try Scratch("managed-hot-close")
        defer { scratch.remove() }
        let document = ManagedDocumentTests.document("a", scratch: scratch)
        try await document.openOrCreate()
        try document.managedObjectContext.insert("Task", ["title": .string("one")])
        try await document.saveThrowing(to: document.fileURL, for: .forOverwriting)
        _ = await document.close()
        #expect(throws: ManagedStoreError.notOpen) { try document.managedObjectContext.insert("Task", ["title": .string("late")]) }
        let again = ManagedDocumentTests.document("a", scratch: scratch)
        try await again.openOrCreate()
        try again.managedObjectContext.insert("Task", ["title": .string("two")])
        try await again.saveThrowing(to: again.fileURL, for: .forOverwriting)
        #expect(try ManagedDocumentTests.titles(again) == ["one", "two"])
        _ = await again.close()
    }

    /// A save writes its log in pieces (header, the changes' own bytes, checksum and trailer):
    /// joined, they are the file encoded in one buffer, and it decodes to the changes.
    @Test func aLogWrittenInPiecesIsTheLogEncodedWhole() throws {
        let scratch = try Scratch("managed-hot-pieces")
        defer { scratch.remove() }
        let store = try Self.store(scratch, "a")
        for index in 0..<50 { try store.insert("Item", ["title": .string("item \(index)")]) }
        let file = ChangeLogFile(kind: .log, schemaVersion: 1, device: "a", sequence: 3, writtenMilliseconds: 7,
                                 coverage: ["a": 3, "b": 1], changes: [])
        let pieces = file.encodedPieces(pending: store.pendingLog)
        let joined = pieces.head + pieces.body + pieces.tail
        #expect(joined == file.encoded(pending: store.pendingLog))
        #expect(try ChangeLogFile.decode(joined).changes.count == 50)
        var damaged = joined
        damaged[pieces.head.count + 5] ^= 0x01
        #expect(throws: LogReader.Damaged.self) { try ChangeLogFile.decode(damaged) }
    }
}

/// The bound of a row encoded in one piece, for the tests.
enum ByteCursorBound {
    static let largest = PendingLog.largestRowEncodedAtOnce
}
