// metadata-query-benchmark: `swift run -c release metadata-query-benchmark [FILES]`
//
// One run, numbers printed:
// 1. gathering a scope of FILES files (default 100,000, in folders of 1,000) with a MetadataQuery,
//    divided by `find DIR -printf '%s %T@\n'` over the same tree, measured in the same run (the
//    median of 3 rounds of each, as Docs/MetadataQuery.md reports them);
// 2. memory per result (resident memory grown while the query holds its results);
// 3. a rename to the did-update notification that reports it, p50/p99, batching off — every
//    rename (and every rename back) must be reported as a change within 10 s;
// 4. a burst of FILES creates in one folder under a live query: how long after the burst its
//    results equal the disk (goal ≤ 10 s), with a plain listing of that folder for comparison;
// 5. gathering 10,000 evicted items (placeholders, files on demand) ÷ gathering them whole (≤ 1.5):
//    both trees side by side, interleaved rounds, the median of the rounds' ratios (EvictedRow.swift).
// Exits 1 when a result is wrong: a rename unseen, results that differ from the disk.
// Times, medians and percentiles are BenchmarkSupport's `Measure` (one clock, nearest-rank
// percentiles), as in every benchmark of the package.
import BenchmarkSupport
import CSystemShim
import Foundation
import Glibc
import Ubiquity

let fileCount = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 100_000
/// `gather-only` as the second argument: just the gathering rounds (for profiling).
let gatherOnly = CommandLine.arguments.dropFirst(2).first == "gather-only"
let perFolder = 1_000
/// Rounds of `find` and of gathering; each figure printed is their median (`Measure.median`).
let gatherRounds = 3

/// Milliseconds from `start` to `end`, both `Measure.now()` readings (monotonic nanoseconds);
/// 0 if `end` is earlier.
func milliseconds(from start: UInt64, to end: UInt64 = Measure.now()) -> Double {
    end >= start ? Double(end - start) / 1e6 : 0
}

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// glibc's `malloc_trim(0)` (CSystemShim): returns freed memory to the system, so resident memory
/// counts what is held.
func mallocTrim() {
    _ = cshim_malloc_trim(0)
}

/// Bytes allocated with malloc right now, over every arena: glibc's `mallinfo2()` (CSystemShim),
/// `uordblks` (in use in the heaps) + `hblkhd` (in use in separately mapped blocks); nil where the
/// C library cannot tell (glibc before 2.33).
func allocatedBytes() -> Int? {
    var bytes = 0
    return cshim_malloc_allocated_bytes(&bytes) == 0 ? bytes : nil
}

/// Creates the tree: folders `d0000`…, each with `perFolder` small files `file-NNNNNN.txt`.
func makeTree(at root: String) {
    mkdir(root, 0o755)
    var made = 0, folder = 0
    while made < fileCount {
        let path = root + "/d" + String(format: "%04d", folder)
        mkdir(path, 0o755)
        for _ in 0..<min(perFolder, fileCount - made) {
            let file = path + "/file-" + String(format: "%06d", made) + ".txt"
            let fd = open(file, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
            if fd >= 0 { _ = write(fd, "x", 1); close(fd) }
            made += 1
        }
        folder += 1
    }
}

/// One run of `find DIR -printf '%s %T@\n'` with its output thrown away (as a reader piping it would
/// consume it, /dev/null costs nothing).
func timeFind(_ root: String) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/find")
    process.arguments = [root, "-printf", "%s %T@\n"]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    let began = Measure.now()
    try process.run()
    process.waitUntilExit()
    return milliseconds(from: began)
}

/// A query over `root` with batching off, its handler on a serial queue of its own, and a
/// semaphore signalled when the update the benchmark waits for arrives.
final class Probe: @unchecked Sendable {
    // @unchecked: `waitingFor` and `arrivalTime` are guarded by `lock`; the semaphores are
    // thread-safe and never reassigned.
    let lock = NSLock()
    let finished = DispatchSemaphore(value: 0)
    var waitingFor: String?
    let arrived = DispatchSemaphore(value: 0)
    /// `Measure.now()` when the awaited update arrived.
    var arrivalTime: UInt64?

    func handle(_ event: MetadataQueryEvent) {
        switch event {
        case .didFinishGathering:
            finished.signal()
        case .didUpdate(let update):
            lock.lock()
            let name = waitingFor
            let match = name != nil && update.changed.contains { $0.name == name }
            if match { waitingFor = nil; arrivalTime = Measure.now() }
            lock.unlock()
            if match { arrived.signal() }
        default:
            break
        }
    }
}

/// METADATA_QUERY_BENCHMARK_TREE=/path: use (and keep) the tree there, made on the first run.
let keptTree = ProcessInfo.processInfo.environment["METADATA_QUERY_BENCHMARK_TREE"]
let root = keptTree ?? FileManager.default.temporaryDirectory.path + "/metadata-query-benchmark-\(getpid())"
print("metadata-query-benchmark: \(fileCount) files in folders of \(perFolder), under \(root)")
if keptTree == nil || !FileManager.default.fileExists(atPath: root) { makeTree(at: root) }
defer { if keptTree == nil { _ = try? FileManager.default.removeItem(atPath: root) } }
_ = try timeFind(root)                     // warm the caches for both

let queue = OperationQueue()
queue.maxConcurrentOperationCount = 1
var findTimes: [Double] = [], gatherTimes: [Double] = []
// The first round's query is kept (measured for memory, then used for the renames), so its
// memory is measured before other queries come and go.
var keptQuery: MetadataQuery?
var keptProbe: Probe?
var memoryPerResult = 0.0, allocatedPerResult = 0.0
for round in 0..<gatherRounds {
    findTimes.append(try timeFind(root))
    let probe = Probe()
    let query = MetadataQuery(scopes: [.folder(URL(fileURLWithPath: root))], notificationBatchingInterval: 0,
                              operationQueue: queue) { probe.handle($0) }
    mallocTrim()
    let before = residentBytes(), allocatedBefore = allocatedBytes()
    let began = Measure.now()
    try query.start()
    probe.finished.wait()
    gatherTimes.append(milliseconds(from: began))
    if round == 0 {
        queue.addOperations([BlockOperation {}], waitUntilFinished: true)
        mallocTrim()   // count what is held, not what malloc keeps cached after freeing
        memoryPerResult = Double(residentBytes() - before) / Double(query.resultCount)
        if let after = allocatedBytes(), let allocatedBefore {
            allocatedPerResult = Double(after - allocatedBefore) / Double(query.resultCount)
        }
        keptQuery = query
        keptProbe = probe
        print("results: \(query.resultCount) (files and folders)")
    } else {
        query.stop()
    }
}
let findMedian = Measure.median(findTimes), gatherMedian = Measure.median(gatherTimes)
print(String(format: "find -printf '%%s %%T@':   %.1f ms (median of %@)", findMedian, findTimes.map { String(format: "%.1f", $0) }.joined(separator: ", ")))
print(String(format: "MetadataQuery gathering: %.1f ms (median of %@)", gatherMedian, gatherTimes.map { String(format: "%.1f", $0) }.joined(separator: ", ")))
print(String(format: "gathering ÷ find: %.2f (goal ≤ 1.5)", gatherMedian / findMedian))
print(String(format: "memory per result: %.0f bytes allocated (malloc, all arenas), %.0f bytes resident (grown while gathering, ÷ results)",
             allocatedPerResult, memoryPerResult))

/// What went wrong (each makes the exit status 1).
var failures: [String] = []

// Renames, one at a time, each timed from just before rename(2) to the handler seeing it. The
// name waited for is set before each rename (there and back), so no report can come too early
// to be seen; a rename not reported as a change within 10 s is a failure.
if !gatherOnly, let query = keptQuery, let probe = keptProbe {
    var latencies: [Double] = []
    func renameAndWait(_ from: String, _ to: String) -> Double? {
        let name = to.split(separator: "/").last.map(String.init) ?? to
        probe.lock.lock(); probe.waitingFor = name; probe.arrivalTime = nil; probe.lock.unlock()
        let began = Measure.now()
        guard rename(from, to) == 0 else { failures.append("rename \(from) → \(to) failed: errno \(errno)"); return nil }
        guard probe.arrived.wait(timeout: .now() + 10) == .success else {
            probe.lock.lock(); probe.waitingFor = nil; probe.lock.unlock()
            failures.append("rename to \(name): no did-update reporting it changed within 10 s")
            return nil
        }
        probe.lock.lock(); defer { probe.lock.unlock() }
        return probe.arrivalTime.map { milliseconds(from: began, to: $0) }
    }
    for index in 0..<300 {
        let folder = root + "/d" + String(format: "%04d", (index * 7) % max(1, fileCount / perFolder))
        let old = folder + "/file-" + String(format: "%06d", ((index * 7) % max(1, fileCount / perFolder)) * perFolder) + ".txt"
        let renamed = folder + "/renamed-\(index).txt"
        guard let latency = renameAndWait(old, renamed) else { break }
        latencies.append(latency)
        guard renameAndWait(renamed, old) != nil else { break }      // back, for the next round
    }
    print(String(format: "rename → did-update (batching off, %d results, %d renames): p50 %.2f ms, p99 %.2f ms, max %.2f ms (goal p99 ≤ 50 ms)",
                 query.resultCount, latencies.count, Measure.percentile(latencies, 0.5), Measure.percentile(latencies, 0.99), latencies.max() ?? 0))
    print("renames reported: \(latencies.count) of 300 (each there and back)")
    // The query holds exactly what is on disk.
    queue.addOperations([BlockOperation {}], waitUntilFinished: true)
    let held = Set(query.results.map(\.path))
    let onDisk = Set((try? FileManager.default.subpathsOfDirectory(atPath: root))?.map { root + "/" + $0 } ?? [])
    if held != onDisk { failures.append("after the renames the results (\(held.count)) differ from the disk (\(onDisk.count))") }
    query.stop()
}

// A burst of creates in one folder under a live query.
if !gatherOnly {
    let burst = try runBurstRow(files: fileCount, under: FileManager.default.temporaryDirectory.path, queue: queue)
    print(String(format: "burst of %d creates in one folder: %.1f ms; did-updates during the burst: %d, results at its end: %d",
                 burst.files, burst.burst, burst.updatesDuringBurst, burst.resultsAtBurstEnd))
    if let catchUp = burst.catchUp {
        print(String(format: "results equal the disk %.1f ms after the burst ended (goal ≤ 10 s); a plain listing of the folder: %.1f ms",
                     catchUp, burst.listing))
    }
    if let failure = burst.failure { failures.append("burst: " + failure) }
}

// Files on demand: gathering evicted items (placeholders) beside gathering whole files.
if !gatherOnly, let failure = try runEvictedRow(count: 10_000, under: FileManager.default.temporaryDirectory.path, queue: queue) {
    failures.append(failure)
}

for failure in failures { print("FAILED: " + failure) }
if !failures.isEmpty {
    if keptTree == nil { _ = try? FileManager.default.removeItem(atPath: root) }
    exit(1)
}
