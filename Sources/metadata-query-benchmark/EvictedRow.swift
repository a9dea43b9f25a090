import BenchmarkSupport
import Foundation
import Glibc
import Ubiquity

/// Files on demand (issue 19): a live query gathering `count` evicted items (only placeholders on
/// disk, listed under their real names with their sizes) ÷ the same query gathering `count` whole
/// files of the same names and sizes.
///
/// The two trees live side by side in two scratch accounts, so both sides are measured in the
/// same rounds: after one unmeasured gathering of each (warm caches for both), `rounds` rounds
/// each gather both, whole first in even rounds and evicted first in odd ones, and the ratio of
/// the round is evicted ÷ whole. The figure is the median of those ratios: a burst of load from
/// another process on the (shared) machine lands in one or two rounds and moves a ratio of
/// neighbours measured a few milliseconds apart much less than it moves a median of times taken
/// a whole phase apart. Beside it, the median ratio of the CPU time the process spent gathering
/// (`CLOCK_PROCESS_CPUTIME_ID`: nothing else runs meanwhile), which time spent waiting for a core
/// of a loaded machine does not move. Both sides check every result of every round: every item
/// found, each with its real size, evicted on one side and whole on the other.
func runEvictedRow(count: Int, under parent: String, queue: OperationQueue, rounds: Int = 21) throws -> String? {
    let base = parent + "/metadata-query-evicted-\(getpid())"
    defer { _ = try? FileManager.default.removeItem(atPath: base) }
    func account(_ name: String) -> UbiquityAccount {
        UbiquityAccount(configuration: UbiquityConfiguration(
            root: URL(fileURLWithPath: base + "/" + name), containerIdentifiers: ["com.example.bench"],
            provider: UbiquityProviderKind.none))
    }
    let whole = account("whole"), evicted = account("evicted")
    /// The size of item `index` (so that each result's size can be checked against its name).
    func size(of index: Int) -> Int { 100 + index % 7 }
    func makeFiles(in account: UbiquityAccount) throws -> [URL] {
        let documents = try account.container().documentsURL
        var files: [URL] = []
        for index in 0..<count {
            let folder = documents.appendingPathComponent("d\(index / 1_000)")
            if index % 1_000 == 0 { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            let file = folder.appendingPathComponent("file-\(index).txt")
            try Data(repeating: 0x61, count: size(of: index)).write(to: file)
            files.append(file)
        }
        return files
    }
    _ = try makeFiles(in: whole)
    // Evicted as the sync agent evicts: the placeholder first, then the file goes.
    for (index, file) in try makeFiles(in: evicted).enumerated() {
        try ItemPlaceholder(name: file.lastPathComponent, size: Int64(size(of: index)), modificationDate: Date()).write(besideItemAt: file)
        try FileManager.default.removeItem(at: file)
    }

    /// The CPU time of the whole process so far, in ms.
    func processCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
    }
    /// One gathering of `account`'s documents: its wall-clock and CPU time in ms, or nil when a
    /// result is wrong.
    func gather(_ account: UbiquityAccount, expectEvicted: Bool) throws -> (wall: Double, cpu: Double)? {
        let done = DispatchSemaphore(value: 0)
        let query = MetadataQuery(scopes: [.ubiquitousDocuments], notificationBatchingInterval: 0, operationQueue: queue,
                                  account: account) { if case .didFinishGathering = $0 { done.signal() } }
        let began = Measure.now(), cpuBegan = processCPUTime()
        try query.start()
        done.wait()
        let time = (wall: Double(Measure.now() - began) / 1e6, cpu: processCPUTime() - cpuBegan)
        let results = query.results.filter { !$0.isFolder }
        query.stop()
        let correct = results.count == count && results.allSatisfy { item in
            guard let index = Int(item.name.dropFirst(5).dropLast(4)) else { return false }
            return item.isEvicted == expectEvicted && item.size == Int64(size(of: index))
        }
        return correct ? time : nil
    }
    let wrongWhole = "FAILED: gathering the whole files found wrong results"
    let wrongEvicted = "FAILED: gathering the evicted items found wrong results"
    guard try gather(whole, expectEvicted: false) != nil else { return wrongWhole }
    guard try gather(evicted, expectEvicted: true) != nil else { return wrongEvicted }
    var wholeTimes: [Double] = [], evictedTimes: [Double] = [], ratios: [Double] = [], cpuRatios: [Double] = []
    for round in 0..<rounds {
        var wholeTime: (wall: Double, cpu: Double)?, evictedTime: (wall: Double, cpu: Double)?
        if round % 2 == 0 {
            wholeTime = try gather(whole, expectEvicted: false)
            evictedTime = try gather(evicted, expectEvicted: true)
        } else {
            evictedTime = try gather(evicted, expectEvicted: true)
            wholeTime = try gather(whole, expectEvicted: false)
        }
        guard let wholeTime else { return wrongWhole }
        guard let evictedTime else { return wrongEvicted }
        wholeTimes.append(wholeTime.wall)
        evictedTimes.append(evictedTime.wall)
        ratios.append(wholeTime.wall > 0 ? evictedTime.wall / wholeTime.wall : 0)
        cpuRatios.append(wholeTime.cpu > 0 ? evictedTime.cpu / wholeTime.cpu : 0)
    }
    print(String(format: "live query gathering %d evicted items: %.1f ms; %d whole files: %.1f ms (medians of %d interleaved rounds); "
                 + "per-round evicted ÷ whole: %@", count, Measure.median(evictedTimes), count, Measure.median(wholeTimes), rounds,
                 ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ")))
    print(String(format: "CPU time of the gathering, per-round evicted ÷ whole: %@ (median %.2f)",
                 cpuRatios.map { String(format: "%.2f", $0) }.joined(separator: ", "), Measure.median(cpuRatios)))
    print(String(format: "gathering evicted ÷ whole (median of the rounds' ratios): %.2f (goal ≤ 1.5)", Measure.median(ratios)))
    return nil
}
