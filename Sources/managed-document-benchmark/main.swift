// managed-document-benchmark: ManagedDocument against raw SQLite (Docs/ManagedDocument.md,
// "Performance"). Run with `swift run -c release managed-document-benchmark [records [rounds]]`.
//
//   insert: N inserts through the context and one save (the log written, the transaction
//           committed) ÷ the same rows inserted raw in one SQLite transaction
//   import: another device imports those N changes from the log ÷ the same rows applied raw
//   latency: a change saved on device A until device B has imported it (its notification
//            posted), p50 — through one shared folder (inotify and the import), or with
//            `--synced A B` through Syncthing beside Syncthing's propagation of a plain file
import FoundationCompatibility
import CSQLite
import Foundation
import ManagedDocuments

/// `--synced A B`: two folders a running Syncthing pair keeps in sync (e.g. started with
/// `/work/shared/peers/syncthing-pair.sh start A B`): the latency is then measured across them.
let syncedFolders: (URL, URL)? = CommandLine.arguments.firstIndex(of: "--synced").flatMap { index in
    index + 2 < CommandLine.arguments.count
        ? (URL(fileURLWithPath: CommandLine.arguments[index + 1]), URL(fileURLWithPath: CommandLine.arguments[index + 2])) : nil
}
let numbers = CommandLine.arguments.dropFirst().prefix { !$0.hasPrefix("--") }
let count = numbers.first.flatMap { Int($0) } ?? 10_000
let rounds = max(1, numbers.dropFirst().first.flatMap { Int($0) } ?? 9)
let latencySamples = 15
let schema = ManagedSchema(version: 1, entities: [
    EntityDescription("Task", attributes: [
        AttributeDescription("title", .string, optional: false, default: ""),
        AttributeDescription("done", .bool, optional: false, default: false),
        AttributeDescription("count", .integer, optional: false, default: 0),
    ]),
])
let folder = FileManager.default.temporaryDirectory.appending(path: "managed-benchmark-\(getpid())")
defer { try? FileManager.default.removeItem(at: folder) }

/// The CPU seconds this process has used (every thread): what a measure costs, which other
/// programs loading the machine disturb far less than the wall clock.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// CPU seconds spent by the last ``measure(_:)`` or raw run (set beside the wall seconds).
nonisolated(unsafe) var lastCPUSeconds = 0.0  // nonisolated(unsafe): the benchmark runs one measure at a time

/// Seconds `body` takes (wall clock); its CPU seconds in ``lastCPUSeconds``.
@MainActor func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let cpu = processCPUSeconds()
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    lastCPUSeconds = processCPUSeconds() - cpu
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A random UUID the way the store makes them (a pool refilled from /dev/urandom).
func randomUUID() -> UUID { RandomIdentifier.make() }

/// Stops the benchmark: a raw baseline that failed measures nothing.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("managed-document-benchmark: \(message)\n".utf8))
    exit(1)
}

/// One raw row: what a record of the benchmark's entity holds.
struct RawRow {
    var id: UUID
    var title: String
    var count: Int64
}

/// Raw SQLite doing the essential work of a save or an import: the rows inserted in one table
/// (the UUID as its 16 bytes, as the store keeps it), in one transaction, through one prepared
/// statement, with the store's durability (WAL, `synchronous = FULL`); every result checked, and
/// the rows counted after the commit. `rows(index)` makes the row `index` (inside the timing: a
/// new identifier, like an insert through the context, or an imported row).
///
/// `textIdentifiers`: the first slice's baseline instead (the UUID as its 36-character text), kept
/// for comparison with the figures measured before the store's identifiers became blobs.
func rawInsert(_ path: String, count: Int, textIdentifiers: Bool = false, rows: (Int) -> RawRow) -> Double {
    var handle: OpaquePointer?
    guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else { fail("cannot open \(path)") }
    defer { sqlite3_close(handle) }
    func check(_ result: Int32, _ what: String, expected: Int32 = SQLITE_OK) {
        if result != expected { fail("raw SQLite failed to \(what): \(String(cString: sqlite3_errmsg(handle)))") }
    }
    check(sqlite3_exec(handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; "
                       + "CREATE TABLE t (id \(textIdentifiers ? "TEXT" : "BLOB") PRIMARY KEY, title TEXT, done INTEGER, count INTEGER)",
                       nil, nil, nil), "create")
    var statement: OpaquePointer?
    check(sqlite3_prepare_v2(handle, "INSERT INTO t VALUES (?, ?, ?, ?)", -1, &statement, nil), "prepare")
    defer { sqlite3_finalize(statement) }
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    let cpu = processCPUSeconds()
    let start = DispatchTime.now().uptimeNanoseconds
    check(sqlite3_exec(handle, "BEGIN", nil, nil, nil), "begin")
    for index in 0..<count {
        let row = rows(index)
        sqlite3_reset(statement)
        if textIdentifiers {
            check(sqlite3_bind_text(statement, 1, row.id.uuidString, -1, transient), "bind")
        } else {
            var id = row.id.uuid
            check(withUnsafeBytes(of: &id) { sqlite3_bind_blob(statement, 1, $0.baseAddress, 16, transient) }, "bind")
        }
        check(sqlite3_bind_text(statement, 2, row.title, -1, transient), "bind")
        check(sqlite3_bind_int64(statement, 3, 0), "bind")
        check(sqlite3_bind_int64(statement, 4, row.count), "bind")
        check(sqlite3_step(statement), "insert", expected: SQLITE_DONE)
    }
    check(sqlite3_exec(handle, "COMMIT", nil, nil, nil), "commit")
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    lastCPUSeconds = processCPUSeconds() - cpu
    var counting: OpaquePointer?
    check(sqlite3_prepare_v2(handle, "SELECT count(*) FROM t", -1, &counting, nil), "prepare")
    defer { sqlite3_finalize(counting) }
    check(sqlite3_step(counting), "count", expected: SQLITE_ROW)
    if sqlite3_column_int64(counting, 0) != Int64(count) { fail("raw SQLite holds \(sqlite3_column_int64(counting, 0)) rows, not \(count)") }
    return seconds
}

@MainActor func document(_ device: String, in folder: URL, container: URL? = nil) -> ManagedDocument {
    let document = ManagedDocument(fileURL: folder.appending(path: "\(device)/Tasks.mdoc"), managedObjectModel: schema)
    document.persistentStoreOptions = [NSPersistentStoreUbiquitousContentNameKey: "Tasks",
                                       NSPersistentStoreUbiquitousContentURLKey: container ?? folder.appending(path: "container"),
                                       ManagedDocumentDeviceIdentifierKey: device]
    document.importInterval = nil
    document.autosaveInterval = nil
    return document
}

/// One round's seconds: ours and raw SQLite's, for each measure.
struct Round {
    var inserts = 0.0, save = 0.0, rawInsert = 0.0, importing = 0.0, rawApply = 0.0
    var insertsCPU = 0.0, saveCPU = 0.0, rawInsertCPU = 0.0, importingCPU = 0.0, rawApplyCPU = 0.0
    /// The first slice's baseline (text identifiers), for comparison with its figures.
    var rawInsertText = 0.0, rawApplyText = 0.0
    var insertRatio: Double { (inserts + save) / rawInsert }
    var importRatio: Double { importing / rawApply }
    var insertCPURatio: Double { (insertsCPU + saveCPU) / rawInsertCPU }
    var importCPURatio: Double { importingCPU / rawApplyCPU }
}

/// The benchmark's entity's records in `document`, in identifier order, as raw rows.
@MainActor func rawRows(of document: ManagedDocument) throws -> [RawRow] {
    try document.managedObjectContext.fetch(FetchRequest(entityName: "Task")).map { record in
        RawRow(id: record.objectID.uuid, title: record.values["title"]?.stringValue ?? "",
               count: record.values["count"]?.integerValue ?? 0)
    }
}

/// One round on fresh stores. Each of ours is measured right beside its raw counterpart, and
/// which of the two goes first alternates from round to round (`number` even: raw first), so a
/// burst of load from other programs, or a cache warmed by the previous step, falls on either
/// side alike rather than always on one.
@MainActor func round(_ number: Int) async throws -> Round {
    let roundFolder = folder.appending(path: "round-\(number)")
    try FileManager.default.createDirectory(at: roundFolder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: roundFolder) }
    // Device ids as DeviceIdentifier makes them: 32 hex digits.
    let writer = document("7c2f0d9e4b8a41f6a3e5c1d2b7f80a19", in: roundFolder)
    let reader = document("e41a9c3b5d7f4e2a8b6c0d1e3f5a7b9c", in: roundFolder)
    try await writer.openOrCreate()
    try await reader.openOrCreate()
    var result = Round()
    let rawFirst = number % 2 == 0
    func measureRawInsert() {
        result.rawInsert = rawInsert(roundFolder.appending(path: "raw-insert.sqlite").path, count: count) { index in
            RawRow(id: randomUUID(), title: "task \(index)", count: Int64(index))
        }
        result.rawInsertCPU = lastCPUSeconds
    }
    if rawFirst { measureRawInsert() }
    result.inserts = try await measure {
        for index in 0..<count {
            try writer.managedObjectContext.insert("Task", ["title": .string("task \(index)"), "count": .integer(Int64(index))])
        }
    }
    result.insertsCPU = lastCPUSeconds
    result.save = try await measure { try await writer.saveThrowing(to: writer.fileURL, for: .forOverwriting) }
    result.saveCPU = lastCPUSeconds
    if !rawFirst { measureRawInsert() }
    // The rows the import brings (the writer's, read before the timing), applied raw.
    let savedRows = try rawRows(of: writer)
    func measureRawApply() {
        result.rawApply = rawInsert(roundFolder.appending(path: "raw-apply.sqlite").path, count: count) { savedRows[$0] }
        result.rawApplyCPU = lastCPUSeconds
    }
    if rawFirst { measureRawApply() }
    var imported = 0
    result.importing = await measure {
        imported = await reader.importChanges().inserted.count
    }
    result.importingCPU = lastCPUSeconds
    if !rawFirst { measureRawApply() }
    // The import brought exactly the rows applied raw.
    let importedRows = try rawRows(of: reader)
    guard imported == count, importedRows.count == count, savedRows.count == count,
          zip(importedRows, savedRows).allSatisfy({ $0.id == $1.id && $0.title == $1.title && $0.count == $1.count }) else {
        fail("imported \(imported) of \(count) records, or not the records saved")
    }
    result.rawInsertText = rawInsert(roundFolder.appending(path: "raw-insert-text.sqlite").path, count: count, textIdentifiers: true) { index in
        RawRow(id: randomUUID(), title: "task \(index)", count: Int64(index))
    }
    result.rawApplyText = rawInsert(roundFolder.appending(path: "raw-apply-text.sqlite").path, count: count,
                                    textIdentifiers: true) { savedRows[$0] }
    _ = await writer.close()
    _ = await reader.close()
    return result
}

/// Waits (on the main actor, bounded) for `document` to post an import that inserted `id`.
@MainActor final class ImportWaiter {
    private var continuation: CheckedContinuation<Void, Never>?
    private var arrived = false
    private var observer: (any NSObjectProtocol)?

    init(_ document: ManagedDocument, id: ManagedObjectID) {
        observer = NotificationCenter.default.addObserver(forName: .NSPersistentStoreDidImportUbiquitousContentChanges,
                                                          object: document, queue: nil) { [weak self] note in
            guard (note.userInfo?[NSInsertedObjectsKey] as? Set<ManagedObjectID>)?.contains(id) == true else { return }
            MainActor.assumeIsolated { self?.finish() }
        }
    }

    private func finish() {
        arrived = true
        continuation?.resume()
        continuation = nil
        if let observer { NotificationCenter.default.removeObserver(observer) }
        observer = nil
    }

    /// Returns once the import arrived; fails the benchmark after a minute.
    func wait() async {
        if arrived { return }
        let guardTask = Task { @MainActor [weak self] in
            try? await Task.sleep(for: .seconds(60))
            if self?.arrived == false { fail("device B never imported the change (a minute passed)") }
        }
        await withCheckedContinuation { continuation = $0 }
        guardTask.cancel()
    }
}

/// The median of `values` (in seconds), in milliseconds.
func medianMilliseconds(_ values: [Double]) -> Double {
    values.isEmpty ? 0 : values.sorted()[values.count / 2] * 1000
}

/// A change saved on device A until device B posted its import: `latencySamples` times. The two
/// devices share one folder, or each has its side of a Syncthing pair.
@MainActor func importLatency() async throws -> [Double] {
    let latencyFolder = folder.appending(path: "latency")
    let shared = latencyFolder.appending(path: "shared")
    let (containerA, containerB) = syncedFolders ?? (shared, shared)
    let writer = document("a\(getpid())", in: latencyFolder, container: containerA)
    let reader = document("b\(getpid())", in: latencyFolder, container: containerB)
    reader.importInterval = .seconds(5)  // the default: imports come from the inotify watch
    try await writer.openOrCreate()
    try await reader.openOrCreate()
    var samples: [Double] = []
    for index in 0..<latencySamples {
        let id = try writer.managedObjectContext.insert("Task", ["title": .string("latency \(index)")])
        let waiter = ImportWaiter(reader, id: id)
        samples.append(try await measure {
            try await writer.saveThrowing(to: writer.fileURL, for: .forOverwriting)
            await waiter.wait()
        })
    }
    _ = await writer.close()
    _ = await reader.close()
    return samples
}

/// Syncthing's own propagation of a small plain file from A to B (written and renamed into
/// place, as the store's logs are), `latencySamples` times.
func plainFileLatency(_ folders: (URL, URL)) throws -> [Double] {
    var samples: [Double] = []
    for index in 0..<latencySamples {
        let name = "probe-\(getpid())-\(index).txt"
        let temporary = folders.0.appending(path: ".\(name).tmp")
        let start = DispatchTime.now().uptimeNanoseconds
        try Data("probe \(index)\n".utf8).write(to: temporary)
        guard rename(temporary.path, folders.0.appending(path: name).path) == 0 else { fail("cannot write \(name)") }
        let arrived = folders.1.appending(path: name).path
        while !FileManager.default.fileExists(atPath: arrived) {
            if DispatchTime.now().uptimeNanoseconds - start > 60_000_000_000 { fail("Syncthing never brought \(name)") }
            usleep(1_000)
        }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        try? FileManager.default.removeItem(at: folders.0.appending(path: name))
    }
    return samples
}

/// The value at fraction `quantile` (0…1) of `values` once sorted (0.5: the median).
func quantile(_ values: [Double], _ quantile: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * quantile).rounded()))]
}

/// Runs one warm-up round (not counted: the first touches of the code, the files and SQLite's
/// caches), then `rounds` rounds, each on fresh stores with ours and raw SQLite interleaved
/// (see ``round(_:)``), and prints the median of the rounds' ratios (a loaded machine disturbs
/// single rounds, on either side), the middle half of them, and the ratio of each side's fastest
/// round (the least disturbed).
@MainActor func run() async throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    _ = try await round(-1)
    var results: [Round] = []
    for number in 0..<rounds { results.append(try await round(number)) }
    let insert = results.sorted { $0.insertRatio < $1.insertRatio }[results.count / 2]
    let importing = results.sorted { $0.importRatio < $1.importRatio }[results.count / 2]
    print(String(format: "(median of %d interleaved rounds; that round: inserts %.3f s, save %.3f s)", results.count, insert.inserts, insert.save))
    print(String(format: "insert %d records and save: %.3f s; raw SQLite: %.3f s; ratio %.2f (goal ≤ 1.5)",
                 count, insert.inserts + insert.save, insert.rawInsert, insert.insertRatio))
    print(String(format: "import %d changes: %.3f s; raw SQLite: %.3f s; ratio %.2f (goal ≤ 2.0)",
                 count, importing.importing, importing.rawApply, importing.importRatio))
    let insertRatios = results.map(\.insertRatio), importRatios = results.map(\.importRatio)
    let fastest = { (values: [Double]) in values.min() ?? 0 }
    print(String(format: "spread of the rounds' ratios (middle half): insert %.2f–%.2f, import %.2f–%.2f; "
                 + "fastest round against fastest round: insert %.2f, import %.2f",
                 quantile(insertRatios, 0.25), quantile(insertRatios, 0.75), quantile(importRatios, 0.25), quantile(importRatios, 0.75),
                 fastest(results.map { $0.inserts + $0.save }) / fastest(results.map(\.rawInsert)),
                 fastest(results.map(\.importing)) / fastest(results.map(\.rawApply))))
    let insertCPU = quantile(results.map(\.insertCPURatio), 0.5)
    let importCPU = quantile(results.map(\.importCPURatio), 0.5)
    print(String(format: "CPU time instead of wall time (median ratios; less disturbed by a loaded machine): insert %.2f, import %.2f",
                 insertCPU, importCPU))
    let insertText = results.map { ($0.inserts + $0.save) / $0.rawInsertText }.sorted()[results.count / 2]
    let importText = results.map { $0.importing / $0.rawApplyText }.sorted()[results.count / 2]
    print(String(format: "against raw SQLite keeping the UUIDs as text, as the first slice's baseline did (median ratios): insert %.2f, import %.2f",
                 insertText, importText))
    let latency = medianMilliseconds(try await importLatency())
    if let syncedFolders {
        let plain = medianMilliseconds(try plainFileLatency(syncedFolders))
        print(String(format: "change on device A → imported on device B over Syncthing, p50 of %d: %.0f ms; "
                     + "Syncthing's propagation of a plain file: %.0f ms; difference %.0f ms (goal ≤ 100 ms)",
                     latencySamples, latency, plain, latency - plain))
    } else {
        print(String(format: "change on device A → imported on device B through one shared folder (inotify), p50 of %d: %.1f ms "
                     + "(what the store adds to the sync tool's propagation; goal ≤ 100 ms)", latencySamples, latency))
    }
}

/// `--profile-inserts`: only the insert-and-save half, `rounds` times (to profile it alone with
/// `perf record`), printing each round's seconds, wall clock and CPU.
@MainActor func profileInserts() async throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for number in 0..<rounds {
        let roundFolder = folder.appending(path: "profile-\(number)")
        try FileManager.default.createDirectory(at: roundFolder, withIntermediateDirectories: true)
        let writer = document("7c2f0d9e4b8a41f6a3e5c1d2b7f80a19", in: roundFolder)
        try await writer.openOrCreate()
        let inserts = try await measure {
            for index in 0..<count {
                try writer.managedObjectContext.insert("Task", ["title": .string("task \(index)"), "count": .integer(Int64(index))])
            }
        }
        let insertsCPU = lastCPUSeconds
        let save = try await measure { try await writer.saveThrowing(to: writer.fileURL, for: .forOverwriting) }
        print(String(format: "inserts %.4f s, save %.4f s (CPU: inserts %.4f s, save %.4f s)", inserts, save, insertsCPU, lastCPUSeconds))
        _ = await writer.close()
        try? FileManager.default.removeItem(at: roundFolder)
    }
}

if CommandLine.arguments.contains("--profile-inserts") { try await profileInserts() } else { try await run() }
