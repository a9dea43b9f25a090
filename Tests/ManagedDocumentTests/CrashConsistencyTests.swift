import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// `kill -9` of a real process in the middle of saves or of an import leaves the store and the
/// logs consistent: after recovery (the next open and import), the device's store is exactly
/// what a newcomer builds from the logs alone.
@Suite(.serialized) struct CrashConsistencyTests {
    static func helper(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(executable: ChildProcess.helperURL(named: "ManagedDocumentTestHelper"), arguments)
    }

    static func synchronizer(_ storePath: String, container: URL, device: String) throws -> StoreSynchronizer {
        try StoreSynchronizer(storePath: storePath, schema: TestSchemas.items, device: device,
                              folder: LogFolder(contentURL: container, storeName: "Items", device: device), durable: false)
    }

    static func dump(_ synchronizer: StoreSynchronizer) throws -> String {
        try synchronizer.withStore { store throws(ManagedStoreError) in try store.dump() }
    }

    static func integrity(_ synchronizer: StoreSynchronizer) throws -> [[SQLiteValue]] {
        try synchronizer.withStore { store throws(ManagedStoreError) in
            try store.database { () throws(SQLiteError) in try store.connection.rows("PRAGMA integrity_check") }
        }
    }

    @Test(arguments: [1, 4, 9])
    func killedWhileSavingTheStoreAndTheLogsAgree(afterSaves: Int) throws {
        let scratch = try Scratch("managed-kill-save")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let document = scratch.path + "/a/Items.mdoc"
        let child = try Self.helper(["save-loop", document, container.path, "a", "100000"])
        #expect(child.expect("saved \(afterSaves)") == "saved \(afterSaves)")
        child.kill9()   // somewhere in the saves that follow: an insert, the log write, the commit

        let recovered = try Self.synchronizer(ManagedDocument.persistentStoreURL(inPackage: URL(fileURLWithPath: document)).path,
                                              container: container, device: "a")
        #expect(try Self.integrity(recovered) == [[.text("ok")]])
        let outcome = recovered.importChanges()
        #expect(outcome.failures.isEmpty, "\(outcome.failures)")
        let newcomer = try Self.synchronizer(scratch.path + "/newcomer.sqlite", container: container, device: "z")
        #expect(newcomer.importChanges().failures.isEmpty)
        #expect(try Self.dump(recovered) == Self.dump(newcomer))
        #expect(try recovered.withStore { store throws(ManagedStoreError) in try store.count("Item") } >= 20 * (afterSaves + 1))

        // Saving goes on after the recovery, without reusing a sequence number (a baseline and
        // compaction may also run if the child got far: only the new log is compared).
        let folder = LogFolder(contentURL: container, storeName: "Items", device: "a")
        let before = folder.entries() ?? []
        try recovered.withStore { store throws(ManagedStoreError) in _ = try store.insert("Item", ["title": "after the crash"]) }
        try recovered.save()
        let added = (folder.entries() ?? []).filter { $0.kind == .log && !before.contains($0) }
        #expect(added.count == 1, "before \(before.map(\.fileName).sorted()), added \(added.map(\.fileName))")
        #expect(added.allSatisfy { new in before.allSatisfy { $0.sequence < new.sequence } })
    }

    @Test func killedWhileImportingTheStoreRecovers() throws {
        let scratch = try Scratch("managed-kill-import")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let writer = try Self.synchronizer(scratch.path + "/writer.sqlite", container: container, device: "a")
        for log in 0..<10 {
            try writer.withStore { store throws(ManagedStoreError) in
                for item in 0..<400 { try store.insert("Item", ["title": .string("log \(log) item \(item)"), "count": .integer(Int64(item))]) }
            }
            try writer.save()
        }
        let document = scratch.path + "/b/Items.mdoc"
        let child = try Self.helper(["import", document, container.path, "b"])
        #expect(child.expect("importing") == "importing")
        child.kill9()

        let recovered = try Self.synchronizer(ManagedDocument.persistentStoreURL(inPackage: URL(fileURLWithPath: document)).path,
                                              container: container, device: "b")
        #expect(try Self.integrity(recovered) == [[.text("ok")]])
        #expect(recovered.importChanges().failures.isEmpty)
        #expect(try Self.dump(recovered) == Self.dump(writer))
    }
}
