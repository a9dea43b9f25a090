import FoundationCompatibility
import CloudDocuments
import Foundation
import Testing
import TestSupport
@testable import ManagedDocuments

/// Two documents as two devices, each with its own container folder; the test plays the sync
/// tool, copying the change-log files from one folder to the other.
@MainActor @Suite struct ManagedDocumentTests {
    static let schema = ManagedSchema(version: 1, entities: [
        EntityDescription("Task", attributes: [
            AttributeDescription("title", .string, optional: false, default: ""),
            AttributeDescription("done", .bool, optional: false, default: false),
            AttributeDescription("created", .date),
        ]),
    ])

    static func document(_ device: String, scratch: Scratch, importInterval: Duration? = nil) -> ManagedDocument {
        let document = ManagedDocument(fileURL: scratch.url.appending(path: "\(device)/Tasks.mdoc"), managedObjectModel: schema)
        document.persistentStoreOptions = [NSPersistentStoreUbiquitousContentNameKey: "Tasks",
                                           NSPersistentStoreUbiquitousContentURLKey: scratch.url.appending(path: "\(device)-container"),
                                           ManagedDocumentDeviceIdentifierKey: device]
        document.importInterval = importInterval
        document.autosaveInterval = nil
        return document
    }

    /// The sync tool: copies every log and baseline of `from`'s container that `to`'s lacks.
    static func sync(_ from: String, to: String, scratch: Scratch) throws {
        let source = scratch.url.appending(path: "\(from)-container/ManagedDocuments/Tasks")
        let target = scratch.url.appending(path: "\(to)-container/ManagedDocuments/Tasks")
        let manager = FileManager.default
        for device in (try? manager.contentsOfDirectory(atPath: source.path)) ?? [] {
            try manager.createDirectory(at: target.appending(path: device), withIntermediateDirectories: true)
            for name in try manager.contentsOfDirectory(atPath: source.appending(path: device).path) where !name.hasPrefix(".") {
                let destination = target.appending(path: "\(device)/\(name)")
                if !manager.fileExists(atPath: destination.path) {
                    try manager.copyItem(at: source.appending(path: "\(device)/\(name)"), to: destination)
                }
            }
        }
    }

    static func titles(_ document: ManagedDocument) throws -> [String] {
        try document.managedObjectContext.fetch(FetchRequest(entityName: "Task", sortDescriptors: [RecordSortDescriptor(key: "title")]))
            .map { $0["title"].stringValue ?? "" }
    }

    /// Collects the import notifications a document posts.
    final class Notes: @unchecked Sendable {
        // @unchecked: only touched on the main actor (observer blocks run on the posting thread,
        // which is the main actor for these notifications; the test reads on the main actor).
        var imports: [[String: Set<ManagedObjectID>]] = []
        var failures: [ManagedStoreError] = []
        var observers: [any NSObjectProtocol] = []

        init(_ document: ManagedDocument) {
            observers.append(NotificationCenter.default.addObserver(
                forName: .NSPersistentStoreDidImportUbiquitousContentChanges, object: document, queue: nil) { [self] note in
                    var ids: [String: Set<ManagedObjectID>] = [:]
                    for key in [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey] {
                        ids[key] = note.userInfo?[key] as? Set<ManagedObjectID> ?? []
                    }
                    MainActor.assumeIsolated { imports.append(ids) }
                })
            observers.append(NotificationCenter.default.addObserver(
                forName: .ManagedDocumentImportDidFail, object: document, queue: nil) { [self] note in
                    let error = note.userInfo?[ManagedDocumentErrorKey] as? ManagedStoreError
                    MainActor.assumeIsolated { if let error { failures.append(error) } }
                })
        }

        func stop() { for observer in observers { NotificationCenter.default.removeObserver(observer) } }
    }

    @Test func twoDevicesShareRecordsMergePerAttributeAndHearImportsOnTheMainActor() async throws {
        let scratch = try Scratch("managed-document")
        defer { scratch.remove() }
        let a = Self.document("a", scratch: scratch), b = Self.document("b", scratch: scratch)
        try await a.openOrCreate()
        try await b.openOrCreate()
        let notes = Notes(b)
        defer { notes.stop() }

        let milk = try a.managedObjectContext.insert("Task", ["title": "Buy milk"])
        let bread = try a.managedObjectContext.insert("Task", ["title": "Bake bread"])
        #expect(a.hasUnsavedChanges)
        try await a.saveThrowing(to: a.fileURL, for: .forOverwriting)
        #expect(!a.managedObjectContext.hasChanges)
        try Self.sync("a", to: "b", scratch: scratch)
        let first = await b.importChanges()
        #expect(first.inserted == [milk, bread])
        #expect(notes.imports.last?[NSInsertedObjectsKey] == [milk, bread])
        #expect(try Self.titles(b) == ["Bake bread", "Buy milk"])

        // Concurrent edits of different attributes of one record: both kept.
        try a.managedObjectContext.update(milk, ["title": "Buy oat milk"])
        try b.managedObjectContext.update(milk, ["done": true])
        // Delete against a concurrent update: the delete wins.
        try a.managedObjectContext.delete(bread)
        try b.managedObjectContext.update(bread, ["title": "Bake rye bread"])
        try await a.saveThrowing(to: a.fileURL, for: .forOverwriting)
        try await b.saveThrowing(to: b.fileURL, for: .forOverwriting)
        try Self.sync("a", to: "b", scratch: scratch)
        try Self.sync("b", to: "a", scratch: scratch)
        await a.importChanges()
        let second = await b.importChanges()
        #expect(second.deleted == [bread] && second.updated == [milk])
        for document in [a, b] {
            let records = try document.managedObjectContext.fetch(FetchRequest(entityName: "Task"))
            #expect(records.count == 1)
            #expect(records.first?["title"] == "Buy oat milk")
            #expect(records.first?["done"] == true)
        }
        #expect(notes.failures.isEmpty)
        // Saving after imports is no conflict: the package is the store's own.
        #expect(!a.documentState.contains(.inConflict) && !b.documentState.contains(.inConflict))
        let closedA = await a.close(), closedB = await b.close()
        #expect(closedA && closedB)

        // Reopened, the store is as it was saved.
        let reopened = Self.document("a", scratch: scratch)
        try await reopened.openOrCreate()
        #expect(try Self.titles(reopened) == ["Buy oat milk"])
        _ = await reopened.close()
    }

    @Test func autosaveSavesAndAutomaticImportsNotify() async throws {
        let scratch = try Scratch("managed-autosave")
        defer { scratch.remove() }
        let a = Self.document("a", scratch: scratch)
        let b = Self.document("b", scratch: scratch, importInterval: .milliseconds(20))
        try await a.openOrCreate()
        try await b.openOrCreate()
        let notes = Notes(b)
        defer { notes.stop() }
        a.autosaveInterval = .milliseconds(50)
        let id = try a.managedObjectContext.insert("Task", ["title": "Autosaved"])
        let ownFolder = scratch.url.appending(path: "a-container/ManagedDocuments/Tasks/a")
        try await Polling.until("autosave writes a change log") {
            ((try? FileManager.default.contentsOfDirectory(atPath: ownFolder.path)) ?? []).contains { $0.hasSuffix(".mdlog") }
        }
        try Self.sync("a", to: "b", scratch: scratch)
        try await Polling.until("b imports on its own and notifies") { notes.imports.contains { $0[NSInsertedObjectsKey] == [id] } }
        #expect(try Self.titles(b) == ["Autosaved"])
        _ = await a.close()
        _ = await b.close()
    }

    @Test func aDamagedLogIsReportedByNotificationAndTheRestApplied() async throws {
        let scratch = try Scratch("managed-damaged-doc")
        defer { scratch.remove() }
        let a = Self.document("a", scratch: scratch), b = Self.document("b", scratch: scratch)
        try await a.openOrCreate()
        try await b.openOrCreate()
        let notes = Notes(b)
        defer { notes.stop() }
        try a.managedObjectContext.insert("Task", ["title": "one"])
        try await a.saveThrowing(to: a.fileURL, for: .forOverwriting)
        try a.managedObjectContext.insert("Task", ["title": "two"])
        try await a.saveThrowing(to: a.fileURL, for: .forOverwriting)
        try Self.sync("a", to: "b", scratch: scratch)
        let folder = scratch.url.appending(path: "b-container/ManagedDocuments/Tasks/a")
        let first = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().first)
        try Data("garbage".utf8).write(to: folder.appending(path: first))
        await b.importChanges()
        #expect(try Self.titles(b) == ["two"])
        guard case .unreadableLog? = notes.failures.first else {
            Issue.record("expected an unreadable-log notification, got \(notes.failures)")
            return
        }
        _ = await a.close()
        _ = await b.close()
    }

    @Test func theContextRefusesWorkBeforeOpenAndBadValues() async throws {
        let scratch = try Scratch("managed-context")
        defer { scratch.remove() }
        let a = Self.document("a", scratch: scratch)
        #expect(throws: ManagedStoreError.notOpen) { try a.managedObjectContext.insert("Task", ["title": "x"]) }
        try await a.openOrCreate()
        #expect(throws: ManagedStoreError.unknownEntity("Nope")) { try a.managedObjectContext.insert("Nope") }
        #expect(throws: ManagedStoreError.unknownAttribute(entity: "Task", attribute: "colour")) {
            try a.managedObjectContext.insert("Task", ["colour": "red"])
        }
        #expect(throws: ManagedStoreError.self) { try a.managedObjectContext.insert("Task", ["title": 3]) }
        let id = try a.managedObjectContext.insert("Task", ["title": "b"])
        try a.managedObjectContext.insert("Task", ["title": "a", "done": true])
        let open = try a.managedObjectContext.fetch(FetchRequest(entityName: "Task", predicate: .equal("done", false)))
        #expect(open.map(\.objectID) == [id])
        let search = try a.managedObjectContext.fetch(FetchRequest(entityName: "Task", predicate: .contains("title", "A"),
                                                                     sortDescriptors: [RecordSortDescriptor(key: "title", ascending: false)]))
        #expect(search.map { $0["title"] } == ["a"])
        _ = await a.close()
    }
}
