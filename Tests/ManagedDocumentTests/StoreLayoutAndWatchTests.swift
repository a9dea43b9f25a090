import FoundationCompatibility
import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// What the speed work changed underneath, held to the old behaviour: the slice-by-8 checksum,
/// identifiers as 16-byte blobs (with stores of the first layout migrated), and imports started
/// by inotify instead of the poll.
@Suite struct StoreLayoutAndWatchTests {
    /// The byte-at-a-time CRC-32 the slice-by-8 one replaced.
    static func referenceCRC(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    @Test func theSliceByEightChecksumIsTheByteAtATimeOne() {
        var random = SplitMix64(seed: 0xC4C3_2)
        for length in Array(0..<70) + [1_000, 4_099, 65_537] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(CRC32.checksum(bytes) == Self.referenceCRC(bytes), "length \(length)")
            if length > 3 { #expect(CRC32.checksum(bytes[1..<length - 1]) == Self.referenceCRC(Array(bytes[1..<length - 1]))) }
        }
    }

    @Test func randomIdentifiersAreVersionFourAndDistinct() {
        let made = (0..<5_000).map { _ in RandomIdentifier.make() }
        #expect(Set(made).count == made.count)
        #expect(made.allSatisfy { $0.uuid.6 >> 4 == 4 && $0.uuid.8 >> 6 == 2 })
    }

    /// A store of the first layout (text identifiers in a rowid table) opens with every register
    /// kept, its identifiers now blobs.
    @Test func aStoreWithTextIdentifiersIsMigrated() throws {
        let scratch = try Scratch("managed-migrate")
        defer { scratch.remove() }
        let path = scratch.path + "/old.sqlite"
        let id = UUID()
        do {
            let connection = try SQLiteConnection(path: path, durable: false)
            try connection.execute(RecordTables.bookkeeping)
            try connection.execute("""
                CREATE TABLE "e_Item" (id TEXT PRIMARY KEY NOT NULL,
                  "$exists" INTEGER, "$exists$t" INTEGER NOT NULL DEFAULT 0, "$exists$d" INTEGER NOT NULL DEFAULT 0,
                  "title" TEXT, "title$t" INTEGER NOT NULL DEFAULT 0, "title$d" INTEGER NOT NULL DEFAULT 0)
                """)
            try connection.execute("INSERT INTO md_devices (number, name) VALUES (1, 'a')")
            try connection.run("""
                INSERT INTO "e_Item" (id, "$exists", "$exists$t", "$exists$d", "title", "title$t", "title$d")
                VALUES (?, 1, 65536, 1, 'kept', 65536, 1)
                """, [.text(id.uuidString)])
            try connection.execute("INSERT INTO md_meta (key, value) VALUES ('schemaVersion', 1)")
        }
        let store = try RecordStore(path: path, schema: TestSchemas.items, device: "a", durable: false)
        let records = try store.fetch(FetchRequest(entityName: "Item"))
        #expect(records.map(\.objectID.uuid) == [id])
        #expect(records.first?.values["title"] == .string("kept"))
        #expect(records.first?.values["count"] == .null)  // added by the schema: never written
        let types = try store.connection.rows("SELECT typeof(id) FROM \"e_Item\"")
        #expect(types == [[.text("blob")]])
        try store.update(ManagedObjectID(entity: "Item", uuid: id), ["count": 3])
        #expect(try store.registers(of: ManagedObjectID(entity: "Item", uuid: id))?["title"]?.timestamp.packed == 65536)
    }

    /// With the fallback poll a day apart, only the inotify watch can bring another device's log
    /// in: it does, into a device folder that did not exist when the document opened.
    @MainActor @Test func aLogRenamedIntoTheContainerIsImportedWithoutThePoll() async throws {
        let scratch = try Scratch("managed-watch")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let document = ManagedDocument(fileURL: scratch.url.appending(path: "a/Items.mdoc"), managedObjectModel: TestSchemas.items)
        document.persistentStoreOptions = [NSPersistentStoreUbiquitousContentNameKey: "Items",
                                           NSPersistentStoreUbiquitousContentURLKey: container,
                                           ManagedDocumentDeviceIdentifierKey: "a"]
        document.importInterval = .seconds(86_400)
        document.autosaveInterval = nil
        try await document.openOrCreate()
        let notes = ManagedDocumentTests.Notes(document)
        defer { notes.stop() }

        // Another device, writing into the same container (its files are renamed into place).
        let other = try CrashConsistencyTests.synchronizer(scratch.path + "/b.sqlite", container: container, device: "b")
        let inserted = try other.withStore { store throws(ManagedStoreError) in try store.insert("Item", ["title": "from b"]) }
        try other.save()
        try await Polling.until("the watch imports b's first log") { notes.imports.contains { $0[NSInsertedObjectsKey]?.contains(inserted) == true } }

        // A second log into the folder now watched.
        try other.withStore { store throws(ManagedStoreError) in try store.update(inserted, ["title": "again"]) }
        try other.save()
        try await Polling.until("the watch imports b's second log") { notes.imports.contains { $0[NSUpdatedObjectsKey]?.contains(inserted) == true } }
        #expect(try document.managedObjectContext.existingRecord(with: inserted)?.values["title"] == .string("again"))
        #expect(notes.failures.isEmpty)
        try await document.closeThrowing()
    }
}

/// A store released closes its database: no descriptor of the process still names its file.
@Suite struct StoreReleaseTests {
    static func descriptors(naming path: String) -> Int {
        let folder = "/proc/self/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) ?? "").hasPrefix(path)
        }.count
    }

    @Test func aReleasedStoreClosesItsDatabaseFiles() throws {
        let scratch = try Scratch("managed-release")
        defer { scratch.remove() }
        let path = scratch.path + "/store.sqlite"
        do {
            let synchronizer = try CrashConsistencyTests.synchronizer(path, container: scratch.url.appending(path: "container"), device: "a")
            try synchronizer.withStore { store throws(ManagedStoreError) in _ = try store.insert("Item", ["title": "x"]) }
            try synchronizer.save()
            _ = synchronizer.importChanges()
            #expect(Self.descriptors(naming: path) > 0)
        }
        #expect(Self.descriptors(naming: path) == 0)
    }
}
