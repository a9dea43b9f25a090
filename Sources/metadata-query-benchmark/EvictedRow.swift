import BenchmarkSupport
import Foundation
import Ubiquity

/// Files on demand (issue 19): a live query gathering `count` evicted items (only placeholders on
/// disk, listed under their real names with their sizes) ÷ gathering the same `count` items whole,
/// in a container of a scratch account, median of 5 rounds each (the machine may be shared). Checks its own results: every
/// item found, each evicted one with its real size.
func runEvictedRow(count: Int, under parent: String, queue: OperationQueue) throws -> String? {
    let root = parent + "/metadata-query-evicted-\(getpid())"
    defer { _ = try? FileManager.default.removeItem(atPath: root) }
    let account = UbiquityAccount(configuration: UbiquityConfiguration(
        root: URL(fileURLWithPath: root), containerIdentifiers: ["com.example.bench"], provider: UbiquityProviderKind.none))
    let documents = try account.container().documentsURL
    var files: [URL] = []
    for index in 0..<count {
        let folder = documents.appendingPathComponent("d\(index / 1_000)")
        if index % 1_000 == 0 { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let file = folder.appendingPathComponent("file-\(index).txt")
        try Data(repeating: 0x61, count: 100 + index % 7).write(to: file)
        files.append(file)
    }
    func gather(expectEvicted: Bool) throws -> Double? {
        var times: [Double] = []
        for _ in 0..<5 {
            let done = DispatchSemaphore(value: 0)
            let query = MetadataQuery(scopes: [.ubiquitousDocuments], notificationBatchingInterval: 0, operationQueue: queue,
                                      account: account) { if case .didFinishGathering = $0 { done.signal() } }
            let began = Measure.now()
            try query.start()
            done.wait()
            times.append(Double(Measure.now() - began) / 1e6)
            let results = query.results.filter { !$0.isFolder }
            query.stop()
            guard results.count == count,
                  results.allSatisfy({ $0.isEvicted == expectEvicted && $0.size == Int64(100 + (Int($0.name.dropFirst(5).dropLast(4)) ?? 0) % 7) })
            else { return nil }
        }
        return Measure.median(times)
    }
    guard let whole = try gather(expectEvicted: false) else { return "FAILED: gathering the whole files found wrong results" }
    for file in files {
        let size = Int64((try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0)
        try ItemPlaceholder(name: file.lastPathComponent, size: size, modificationDate: Date()).write(besideItemAt: file)
        try FileManager.default.removeItem(at: file)
    }
    guard let evicted = try gather(expectEvicted: true) else { return "FAILED: gathering the evicted items found wrong results" }
    print(String(format: "live query gathering %d evicted items: %.1f ms; %d whole files: %.1f ms; evicted ÷ whole: %.2f (goal ≤ 1.5)",
                 count, evicted, count, whole, evicted / whole))
    return nil
}
