// The burst row of metadata-query-benchmark: a live query of an empty folder, then FILES files
// created in that one folder as fast as one thread can; measured: how long after the burst ends
// the query's results equal the disk (goal: within 10 s), against a plain listing of the folder
// in the same run. The row fails when the results never equal the disk, or take longer.
import BenchmarkSupport
import Foundation
import Glibc
import Ubiquity

/// What the burst row measured.
struct BurstOutcome {
    var files: Int
    var burst: Double
    var updatesDuringBurst: Int
    var resultsAtBurstEnd: Int
    var catchUp: Double?
    var listing: Double
    var failure: String?
}

/// Counts a query's did-update events and signals when its results reach a count.
private final class BurstProbe: @unchecked Sendable {
    // @unchecked: every member is guarded by `lock`.
    private let lock = NSLock()
    private var updates = 0
    private var target = Int.max
    private var reachedAt: UInt64?  // Measure.now()
    let gathered = DispatchSemaphore(value: 0)
    let reached = DispatchSemaphore(value: 0)

    func handle(_ event: MetadataQueryEvent, resultCount: Int) {
        switch event {
        case .didFinishGathering: gathered.signal()
        case .didUpdate:
            lock.lock()
            updates += 1
            let hit = reachedAt == nil && resultCount >= target
            if hit { reachedAt = Measure.now() }
            lock.unlock()
            if hit { reached.signal() }
        default: break
        }
    }

    var updateCount: Int { lock.lock(); defer { lock.unlock() }; return updates }
    var reachedTime: UInt64? { lock.lock(); defer { lock.unlock() }; return reachedAt }

    func expect(_ count: Int) { lock.lock(); target = count; lock.unlock() }
}

/// The names in the folder at `path` (not `.`, `..`), with one `readdir` pass: the raw baseline.
func listNames(_ path: String) -> [String] {
    guard let stream = opendir(path) else { return [] }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name != ".", name != ".." { names.append(name) }
    }
    return names
}

/// Runs the burst row in a fresh folder under `parent`.
func runBurstRow(files: Int, under parent: String, queue: OperationQueue) throws -> BurstOutcome {
    let folder = parent + "/burst-\(getpid())"
    mkdir(folder, 0o755)
    defer { _ = try? FileManager.default.removeItem(atPath: folder) }
    let probe = BurstProbe()
    let holder = QueryHolder()
    let query = MetadataQuery(scopes: [.folder(URL(fileURLWithPath: folder))], notificationBatchingInterval: 0,
                              operationQueue: queue) { event in probe.handle(event, resultCount: holder.query?.resultCount ?? 0) }
    holder.query = query
    defer { query.stop() }
    probe.expect(files)
    try query.start()
    probe.gathered.wait()

    let began = Measure.now()
    for index in 0..<files {
        let fd = open(folder + "/burst-" + String(index) + ".txt", O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        if fd >= 0 { _ = write(fd, "x", 1); close(fd) }
    }
    let ended = Measure.now()
    let updatesDuringBurst = probe.updateCount
    let resultsAtEnd = query.resultCount
    var outcome = BurstOutcome(files: files, burst: milliseconds(from: began, to: ended), updatesDuringBurst: updatesDuringBurst,
                               resultsAtBurstEnd: resultsAtEnd, catchUp: nil, listing: 0)
    if probe.reached.wait(timeout: .now() + 60) == .success, let reachedAt = probe.reachedTime {
        outcome.catchUp = milliseconds(from: ended, to: reachedAt)
    }
    // Once the count is reached (or not), what the query holds must be exactly what is there.
    queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    let listingBegan = Measure.now()
    let onDisk = listNames(folder)
    outcome.listing = milliseconds(from: listingBegan)
    let held = query.results.map(\.name)
    if outcome.catchUp == nil {
        outcome.failure = "the results never reached \(files) (\(query.resultCount) after 60 s)"
    } else if Set(held) != Set(onDisk) || held.count != onDisk.count {
        outcome.failure = "the results (\(held.count)) differ from the disk (\(onDisk.count) names)"
    } else if let catchUp = outcome.catchUp, catchUp > 10_000 {
        outcome.failure = String(format: "the results equalled the disk %.1f s after the burst (goal ≤ 10 s)", catchUp / 1000)
    }
    return outcome
}

/// Lets the handler read the query it belongs to (set once, before the query starts).
private final class QueryHolder: @unchecked Sendable {
    // @unchecked: set before the query starts, read only afterwards.
    var query: MetadataQuery?
}
