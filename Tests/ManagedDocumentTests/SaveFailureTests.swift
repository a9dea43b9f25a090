import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// A save whose change log cannot be written fails as a whole: nothing is committed (SQLite may
/// already have written the save's pages into its WAL while the log was being written, as
/// uncommitted frames), the changes stay unsaved, and the next save publishes them.
@Suite struct SaveFailureTests {
    @Test func aSaveWhoseLogCannotBeWrittenKeepsItsChangesForTheNextSave() throws {
        let scratch = try Scratch("managed-save-failure")
        defer { scratch.remove() }
        let container = scratch.url.appending(path: "container")
        let folder = LogFolder(contentURL: container, storeName: "Items", device: "a")
        let writer = try CrashConsistencyTests.synchronizer(scratch.path + "/a.sqlite", container: container, device: "a")
        func insert(_ range: Range<Int>) throws {
            try writer.withStore { store throws(ManagedStoreError) in
                for item in range { try store.insert("Item", ["title": .string("item \(item)"), "count": .integer(Int64(item))]) }
            }
        }
        try insert(0..<300)
        try writer.save()

        // The device's folder becomes a file: the next log cannot be written.
        try insert(300..<900)
        let moved = scratch.url.appending(path: "moved-folder")
        try FileManager.default.moveItem(at: folder.ownFolder, to: moved)
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: folder.ownFolder.path))
        #expect(throws: ManagedStoreError.self) { try writer.save() }
        #expect(writer.hasUnsavedChanges)
        #expect(try CrashConsistencyTests.integrity(writer) == [[.text("ok")]])
        #expect(try writer.withStore { store throws(ManagedStoreError) in try store.count("Item") } == 900)

        // Once the folder is back, the next save publishes every change the failed one had.
        try FileManager.default.removeItem(at: URL(fileURLWithPath: folder.ownFolder.path))
        try FileManager.default.moveItem(at: moved, to: folder.ownFolder)
        try writer.save()
        #expect(!writer.hasUnsavedChanges)
        #expect(folder.entries()?.filter { $0.kind == .log }.count == 2)
        let newcomer = try CrashConsistencyTests.synchronizer(scratch.path + "/newcomer.sqlite", container: container, device: "z")
        #expect(newcomer.importChanges().failures.isEmpty)
        #expect(try newcomer.withStore { store throws(ManagedStoreError) in try store.count("Item") } == 900)
        #expect(try CrashConsistencyTests.dump(writer) == CrashConsistencyTests.dump(newcomer))
    }
}
