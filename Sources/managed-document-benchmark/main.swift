// managed-document-benchmark: ManagedDocument against raw SQLite (Docs/ManagedDocument.md,
// "Performance"). Run with `swift run -c release managed-document-benchmark [records]`.
//
//   insert: N inserts through the context and one save (the log written, the transaction
//           committed) ÷ the same rows inserted raw in one SQLite transaction
//   import: another device imports those N changes from the log ÷ the same rows applied raw
import CSQLite
import Foundation
import ManagedDocuments

let count = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 10_000
let schema = ManagedSchema(version: 1, entities: [
    EntityDescription("Task", attributes: [
        AttributeDescription("title", .string, optional: false, default: ""),
        AttributeDescription("done", .bool, optional: false, default: false),
        AttributeDescription("count", .integer, optional: false, default: 0),
    ]),
])
let folder = FileManager.default.temporaryDirectory.appending(path: "managed-benchmark-\(getpid())")
defer { try? FileManager.default.removeItem(at: folder) }

/// Seconds `body` takes.
@MainActor func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A random UUID the way the store makes them (getrandom, not Foundation's /dev/urandom read).
func randomUUID() -> UUID { RandomIdentifier.make() }

/// The same rows inserted raw: one table, one transaction, one prepared statement, WAL with
/// `synchronous = FULL` (the store's settings).
func rawInsert(_ path: String) -> Double {
    var handle: OpaquePointer?
    guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else {
        FileHandle.standardError.write(Data("managed-document-benchmark: cannot open \(path)\n".utf8))
        exit(1)
    }
    defer { sqlite3_close(handle) }
    sqlite3_exec(handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t (id TEXT PRIMARY KEY, title TEXT, done INTEGER, count INTEGER)", nil, nil, nil)
    var statement: OpaquePointer?
    sqlite3_prepare_v2(handle, "INSERT INTO t VALUES (?, ?, ?, ?)", -1, &statement, nil)
    defer { sqlite3_finalize(statement) }
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    let start = DispatchTime.now().uptimeNanoseconds
    sqlite3_exec(handle, "BEGIN", nil, nil, nil)
    for index in 0..<count {
        sqlite3_reset(statement)
        sqlite3_bind_text(statement, 1, randomUUID().uuidString, -1, transient)
        sqlite3_bind_text(statement, 2, "task \(index)", -1, transient)
        sqlite3_bind_int64(statement, 3, 0)
        sqlite3_bind_int64(statement, 4, Int64(index))
        sqlite3_step(statement)
    }
    sqlite3_exec(handle, "COMMIT", nil, nil, nil)
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

@MainActor func document(_ device: String) -> ManagedDocument {
    let document = ManagedDocument(fileURL: folder.appending(path: "\(device)/Tasks.mdoc"), managedObjectModel: schema)
    document.persistentStoreOptions = [NSPersistentStoreUbiquitousContentNameKey: "Tasks",
                                       NSPersistentStoreUbiquitousContentURLKey: folder.appending(path: "container"),
                                       ManagedDocumentDeviceIdentifierKey: device]
    document.importInterval = nil
    document.autosaveInterval = nil
    return document
}

@MainActor func run() async throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    // Device ids as DeviceIdentifier makes them: 32 hex digits.
    let writer = document("7c2f0d9e4b8a41f6a3e5c1d2b7f80a19"), reader = document("e41a9c3b5d7f4e2a8b6c0d1e3f5a7b9c")
    try await writer.openOrCreate()
    try await reader.openOrCreate()
    let inserts = try await measure {
        for index in 0..<count {
            try writer.managedObjectContext.insert("Task", ["title": .string("task \(index)"), "count": .integer(Int64(index))])
        }
    }
    let save = try await measure { try await writer.saveThrowing(to: writer.fileURL, for: .forOverwriting) }
    let insert = inserts + save
    var imported = 0
    let importing = await measure {
        imported = await reader.importChanges().inserted.count
    }
    let rawInsertSeconds = rawInsert(folder.appending(path: "raw-insert.sqlite").path)
    let rawApplySeconds = rawInsert(folder.appending(path: "raw-apply.sqlite").path)
    print(String(format: "(inserts %.3f s, save %.3f s)", inserts, save))
    print(String(format: "insert %d records and save: %.3f s; raw SQLite: %.3f s; ratio %.2f (goal ≤ 1.5)",
                 count, insert, rawInsertSeconds, insert / rawInsertSeconds))
    print(String(format: "import %d changes: %.3f s; raw SQLite: %.3f s; ratio %.2f (goal ≤ 2.0)",
                 imported, importing, rawApplySeconds, importing / rawApplySeconds))
    _ = await writer.close()
    _ = await reader.close()
}

try await run()
