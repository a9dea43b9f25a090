// coordination-benchmark: the cost of coordination next to the raw syscalls, measured in one run.
// Run with `swift run -c release coordination-benchmark`.
import BenchmarkSupport
import FileCoordination
import Foundation
import Glibc

if CommandLine.arguments.count > 2, CommandLine.arguments[1] == "--child" {
    ChildRole.run(Array(CommandLine.arguments.dropFirst(2)))
}

startIdleThread()
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "--profile-write-cycle" {
    // For profilers (valgrind --tool=callgrind, perf): nothing but lock cycles —
    // `--profile-write-cycle [write|read|fresh-read|fresh-write] [cycles, 20,000 unless given]`.
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cd-profile.bin")
    _ = FileManager.default.createFile(atPath: url.path, contents: Data())
    let coordinator = Coordinator()
    let mode = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : "write"
    let cycles = CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3]) ?? 20_000 : 20_000
    for _ in 0..<cycles {
        switch mode {
        case "read": try coordinator.coordinate(readingItemAt: url) { _ in }
        case "fresh-read": try Coordinator().coordinate(readingItemAt: url) { _ in }
        case "fresh-write": try Coordinator().coordinate(writingItemAt: url) { _ in }
        default: try coordinator.coordinate(writingItemAt: url) { _ in }
        }
    }
    exit(0)
}
let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cd-bench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let file = folder.appendingPathComponent("data.bin")
try Data(repeating: 7, count: 4096).write(to: file)
let path = file.path
var buffer = [UInt8](repeating: 0, count: 4096)
let coordinator = Coordinator()

print("CloudDocuments coordination benchmark — \(ProcessInfo.processInfo.processorCount) cores, \(Date())")
print("")
print("| measure | raw syscalls | coordinated | ratio / value | goal |")
print("| --- | --- | --- | --- | --- |")

// 1. Coordinated 4 KiB read vs open+read+close.
let rawRead = buffer.withUnsafeMutableBytes { bytes in
    Measure.perCall(iterations: 20_000) { _ = Raw.readFile(path, into: bytes) }
}
let coordinatedRead = try buffer.withUnsafeMutableBytes { bytes in
    try Measure.perCall(iterations: 20_000) {
        try coordinator.coordinate(readingItemAt: file) { url in _ = Raw.readFile(path, into: bytes) }
    }
}
row("read of a 4 KiB file (µs)", format(rawRead / 1000), format(coordinatedRead / 1000),
    format(coordinatedRead / rawRead) + " ×", "≤ 2.0 ×")

let freshCoordinatorRead = try buffer.withUnsafeMutableBytes { bytes in
    try Measure.perCall(iterations: 20_000) {
        try Coordinator().coordinate(readingItemAt: file) { url in _ = Raw.readFile(path, into: bytes) }
    }
}
row("  same, a new Coordinator per read (µs)", format(rawRead / 1000), format(freshCoordinatorRead / 1000),
    format(freshCoordinatorRead / rawRead) + " ×", "≤ 2.0 ×")

// 2. Write-lock cycle with no I/O.
let rawFD = open(path + ".rawlock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
guard rawFD >= 0 else { benchmarkFailed("open \(path).rawlock: errno \(errno)") }
let rawFlock = Measure.perCall(iterations: 100_000) { Raw.flockCycle(rawFD) }
let writeCycle = try Measure.perCall(iterations: 100_000) {
    try coordinator.coordinate(writingItemAt: file) { _ in }
}
row("write-lock cycle, no I/O (µs)", format(rawFlock / 1000) + " (flock)", format(writeCycle / 1000),
    format(writeCycle / 1000) + " µs", "≤ 3 µs")
let freshWriteCycle = try Measure.perCall(iterations: 100_000) {
    try Coordinator().coordinate(writingItemAt: file) { _ in }
}
row("  same, a new Coordinator per write (µs)", format(rawFlock / 1000) + " (flock)", format(freshWriteCycle / 1000),
    format(freshWriteCycle / 1000) + " µs", "≤ 3 µs")
let readCycle = try Measure.perCall(iterations: 100_000) {
    try coordinator.coordinate(readingItemAt: file) { _ in }
}
row("  read-lock cycle, no I/O (µs)", "", format(readCycle / 1000), format(readCycle / 1000) + " µs", "")
if CommandLine.arguments.contains("--hot-rows") {
    // Only the hot-path rows above (reads and lock cycles), for repeated quick runs.
    try? FileManager.default.removeItem(at: folder)
    exit(0)
}
let grouped = Coordinator()
grouped.purposeIdentifier = "com.example.benchmark"
let groupWriteCycle = try Measure.perCall(iterations: 50_000) {
    try grouped.coordinate(writingItemAt: file) { _ in }
}
row("  write-lock cycle, shared purpose identifier (µs)", "", format(groupWriteCycle / 1000),
    format(groupWriteCycle / 1000) + " µs", "")

// 3. 10,000 registered presenters of other files.
final class IdlePresenter: FilePresenter {
    let presentedItemURL: URL?
    let presentedItemOperationQueue = OperationQueue()
    init(_ url: URL) { presentedItemURL = url }
}
let presenters = (0..<10_000).map { IdlePresenter(folder.appendingPathComponent("other-\($0).txt")) }
presenters.forEach(Coordinator.addFilePresenter)
let writeCycleWithPresenters = try Measure.perCall(iterations: 100_000) {
    try coordinator.coordinate(writingItemAt: file) { _ in }
}
let freshWriteCycleWithPresenters = try Measure.perCall(iterations: 100_000) {
    try Coordinator().coordinate(writingItemAt: file) { _ in }
}
presenters.forEach(Coordinator.removeFilePresenter)
let freshWriteCycleAgain = try Measure.perCall(iterations: 100_000) {
    try Coordinator().coordinate(writingItemAt: file) { _ in }
}
let writeCycleAgain = try Measure.perCall(iterations: 100_000) {
    try coordinator.coordinate(writingItemAt: file) { _ in }
}
let baseline = min(writeCycle, writeCycleAgain)
row("write cycle with 10,000 presenters of other files (µs)", format(baseline / 1000) + " (none)",
    format(writeCycleWithPresenters / 1000), format(writeCycleWithPresenters / baseline) + " ×", "≤ 1.2 ×")
let freshBaseline = min(freshWriteCycle, freshWriteCycleAgain)
row("  same, a new Coordinator per write (µs)", format(freshBaseline / 1000) + " (none)",
    format(freshWriteCycleWithPresenters / 1000), format(freshWriteCycleWithPresenters / freshBaseline) + " ×", "≤ 1.2 ×")

// 3b. Presenters in another process (Docs/RemotePresenters.md): 10,000 of other files, then one
// of the file itself (each write then asks it to relinquish, tells it the file changed and runs
// its reacquirer, through its endpoint).
let manyElsewhere = try BenchmarkChild(["present", folder.path, "10000"])
_ = manyElsewhere.readLine()
let freshWriteCycleManyElsewhere = try Measure.perCall(iterations: 100_000) {
    try Coordinator().coordinate(writingItemAt: file) { _ in }
}
manyElsewhere.stop()
let freshWriteCycleNoneElsewhere = try Measure.perCall(iterations: 100_000) {
    try Coordinator().coordinate(writingItemAt: file) { _ in }
}
row("write cycle with 10,000 presenters of other files in another process (µs)",
    format(freshWriteCycleNoneElsewhere / 1000) + " (none)", format(freshWriteCycleManyElsewhere / 1000),
    format(freshWriteCycleManyElsewhere / freshWriteCycleNoneElsewhere) + " ×", "≤ 1.2 ×")
let oneElsewhere = try BenchmarkChild(["present", path, "1"])
_ = oneElsewhere.readLine()
var presentedWrites: [Double] = []
for _ in 0..<3_000 {
    let start = Measure.now()
    try Coordinator().coordinate(writingItemAt: file) { _ in }
    presentedWrites.append(Double(Measure.now() - start))
}
oneElsewhere.stop()
row("write of a file presented in another process p50 / p99 (µs)", format(freshWriteCycleNoneElsewhere / 1000) + " (none)",
    format(Measure.percentile(presentedWrites, 0.5) / 1000) + " / " + format(Measure.percentile(presentedWrites, 0.99) / 1000),
    "p99 overhead " + format((Measure.percentile(presentedWrites, 0.99) - freshWriteCycleNoneElsewhere) / 1e6, 3) + " ms",
    "≤ 1 ms")

// 4. Writer wait while two other processes loop on reads.
func writerWaits(coordinated: Bool, samples: Int) throws -> [Double] {
    let readers = try (0..<2).map { _ in try BenchmarkChild([coordinated ? "loop-read" : "loop-read-raw", path]) }
    for reader in readers { _ = reader.readLine() }
    var waits: [Double] = []
    for _ in 0..<samples {
        let start = Measure.now()
        if coordinated {
            try Coordinator().coordinate(writingItemAt: file) { _ in
                waits.append(Double(Measure.now() - start))
            }
        } else {
            flock(rawFD, LOCK_EX)
            waits.append(Double(Measure.now() - start))
            flock(rawFD, LOCK_UN)
        }
        usleep(1000)  // pacing between attempts, not synchronisation
    }
    readers.forEach { $0.stop() }
    return waits
}
let rawWaits = try writerWaits(coordinated: false, samples: 300)
let waits = try writerWaits(coordinated: true, samples: 300)
row("writer wait p50 / p99 with 2 processes looping on reads (ms)",
    format(Measure.percentile(rawWaits, 0.5) / 1e6, 3) + " / " + format(Measure.percentile(rawWaits, 0.99) / 1e6, 3) + " (flock)",
    format(Measure.percentile(waits, 0.5) / 1e6, 3) + " / " + format(Measure.percentile(waits, 0.99) / 1e6, 3),
    "p99 " + format(Measure.percentile(waits, 0.99) / 1e6, 3) + " ms", "p99 ≤ 10 ms")

// 5. Write handoffs between two processes.
func handoffsPerSecond(role: String, turns: Int) throws -> Double {
    let counter = folder.appendingPathComponent("handoff-\(role).bin")
    try Data(count: 8).write(to: counter)
    let children = try (0..<2).map { try BenchmarkChild([role, counter.path, String($0), String(turns)]) }
    for child in children { _ = child.readLine() }
    let start = Measure.now()
    children.forEach { $0.send() }
    for child in children { _ = child.readLine() }
    let seconds = Double(Measure.now() - start) / 1e9
    children.forEach { $0.stop() }
    return Double(2 * turns) / seconds
}
let rawHandoffs = try handoffsPerSecond(role: "handoff-raw", turns: 5_000)
let handoffs = try handoffsPerSecond(role: "handoff", turns: 5_000)
let freshHandoffs = try handoffsPerSecond(role: "handoff-fresh", turns: 5_000)
row("write handoffs/s between 2 processes", format(rawHandoffs, 0) + " (flock)", format(handoffs, 0),
    format(handoffs / rawHandoffs) + " ×", "≥ 0.5 ×")
row("  same, a new Coordinator per write", format(rawHandoffs, 0) + " (flock)", format(freshHandoffs, 0),
    format(freshHandoffs / rawHandoffs) + " ×", "≥ 0.5 ×")
