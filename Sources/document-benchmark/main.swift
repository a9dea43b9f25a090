// document-benchmark: CloudDocument saving and opening next to the raw syscall path, and the
// example PNG codec's speed. Run with `swift run -c release document-benchmark`.
import BenchmarkSupport
import CloudDocuments
import ExampleDocuments
import Foundation

// Child mode of the two-editors measure (TwoEditors.swift).
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "--child", CommandLine.arguments[2] == "--editor" {
    await TwoEditors.runChild(Array(CommandLine.arguments.dropFirst(3)))
}

// Child mode: open a document and report the memory it took (a fresh process, so the peak is ours).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--open-rss" {
    let url = URL(fileURLWithPath: CommandLine.arguments[2])
    let before = Memory.value("VmRSS")
    let document = BlobDocument(fileURL: url)
    try await document.openThrowing()
    let peak = Memory.value("VmHWM")
    let held = document.blob.count
    try await document.closeThrowing()
    print("\(before) \(peak) \(held)")
    exit(0)
}

// Trace mode: a few warm-up saves, then one raw, one document and one plain save between marker
// writes to /dev/null, so `strace -f` can show the system calls of each kind of save alone.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--trace-saves" {
    let folder = URL(fileURLWithPath: CommandLine.arguments[2])
    let bytes = [UInt8](repeating: 0x41, count: 4096)
    let rawURL = folder.appendingPathComponent("raw.bin"), documentURL = folder.appendingPathComponent("doc.bin")
    let plainURL = folder.appendingPathComponent("plain.bin")
    let document = BlobDocument(fileURL: documentURL)
    document.blob = Data(bytes)
    try await document.saveThrowing(to: documentURL, for: .forCreating)
    let marker = open("/dev/null", O_WRONLY)
    for round in 0..<4 {
        let traced = round == 3
        if traced { _ = write(marker, "raw", 3) }
        RawSafeSave.save(bytes, to: rawURL.path)
        if traced { _ = write(marker, "document", 8) }
        try await document.saveThrowing(to: documentURL, for: .forOverwriting)
        if traced { _ = write(marker, "plain", 5) }
        try Coordinator().coordinate(writingItemAt: plainURL) { url in
            try SafeSave.write(Data(bytes), to: url, creating: false)
        }
        if traced { _ = write(marker, "end", 3) }
    }
    try await document.closeThrowing()
    exit(0)
}

// Profile mode: `--profile-saves raw|document|plain N FOLDER` makes N 4 KiB saves of one kind
// only and prints the mean wall time per save, so `perf record` can see one kind of save alone.
if CommandLine.arguments.count == 5, CommandLine.arguments[1] == "--profile-saves", let count = Int(CommandLine.arguments[3]) {
    let kind = CommandLine.arguments[2], folder = URL(fileURLWithPath: CommandLine.arguments[4])
    let bytes = [UInt8](repeating: 0x41, count: 4096)
    let url = folder.appendingPathComponent("\(kind).bin")
    try? FileManager.default.removeItem(at: url)
    let document = BlobDocument(fileURL: url)
    document.blob = Data(bytes)
    try await document.saveThrowing(to: url, for: .forCreating)
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count {
        switch kind {
        case "raw": RawSafeSave.save(bytes, to: url.path)
        case "document": try await document.saveThrowing(to: url, for: .forOverwriting)
        default:
            try Coordinator().coordinate(writingItemAt: url) { url in try SafeSave.write(Data(bytes), to: url, creating: false) }
        }
    }
    let perSave = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count) / 1e6
    try await document.closeThrowing()
    print(String(format: "%@: %.3f ms per save", kind, perSave))
    exit(0)
}

// Options: `--folder PATH` saves in a new folder inside PATH instead of the temporary folder (e.g.
// /dev/shm, where fsync costs nothing, to see the fixed cost alone); `--rounds-scale X` runs X
// times the rounds; `--saves-only` skips the open and PNG measurements; `--size LABEL` (repeatable:
// 4K, 1M, 16M) measures only those saves; `--editors-only` measures only two processes editing one
// file (section 4); `--hops` adds, after each save size, what a thread hop costs alone (`HopRows`, below).
var options = (parent: NSTemporaryDirectory(), roundsScale: 1.0, savesOnly: false, sizes: Set<String>(), editorsOnly: false,
               hops: false)
do {
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--folder": options.parent = arguments.popFirst() ?? options.parent
        case "--rounds-scale": options.roundsScale = Double(arguments.popFirst() ?? "") ?? 1
        case "--saves-only": options.savesOnly = true
        case "--editors-only": options.editorsOnly = true
        case "--size": options.sizes.insert(arguments.popFirst() ?? "")
        case "--hops": options.hops = true
        default:
            print("usage: document-benchmark [--folder PATH] [--rounds-scale X] [--saves-only | --editors-only] [--size 4K|1M|16M]... [--hops]")
            exit(argument == "--help" || argument == "-h" ? 0 : 2)
        }
    }
}

let folder = URL(fileURLWithPath: options.parent).appendingPathComponent("cd-docbench-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
/// Ends the run early, removing the folder (top-level `defer` does not run at `exit`).
func finish() -> Never {
    try? FileManager.default.removeItem(at: folder)
    exit(0)
}

print("CloudDocuments document benchmark — \(ProcessInfo.processInfo.processorCount) cores, \(Date()), in \(options.parent)")
print("")
print("| measure | raw syscalls | CloudDocument | ratio / value | goal |")
print("| --- | --- | --- | --- | --- |")

/// Per-round ratios of a save to the raw save of the same round: the median, and the middle half
/// (25th to 75th percentile) as the spread.
func ratioSummary(_ times: [Double], over raw: [Double]) -> String {
    let ratios = zip(times, raw).map { $0 / $1 }.sorted()
    let quartile = { (fraction: Double) in ratios[min(ratios.count - 1, Int(Double(ratios.count) * fraction))] }
    return String(format: "%.2f × (%.2f–%.2f)", Measure.median(ratios), quartile(0.25), quartile(0.75))
}

// 1. Save of 4 KiB, 1 MiB, 16 MiB. Each round saves once in each of the three ways, in an order
// that rotates from round to round (so none always follows the same one), in the same folder; a
// few unmeasured rounds first warm up the caches and code paths. The ratio is the median of the
// per-round ratios (each round's saves see the same disk weather), with the middle half of the
// ratios in parentheses; the times are medians.
// 4. (first when asked alone) Two processes editing one file: documents against the README's
// read-modify-write.
if options.editorsOnly {
    try TwoEditors.printRows(in: folder, appends: max(20, Int(400 * options.roundsScale)))
    finish()
}

for (label, size, baseRounds) in [("4 KiB", 4096, 400), ("1 MiB", 1 << 20, 60), ("16 MiB", 16 << 20, 15)] {
    let shortLabel = label.replacingOccurrences(of: " KiB", with: "K").replacingOccurrences(of: " MiB", with: "M")
    if !options.sizes.isEmpty && !options.sizes.contains(shortLabel) { continue }
    let rounds = max(3, Int(Double(baseRounds) * options.roundsScale))
    var bytes = [UInt8](repeating: 0, count: size)
    for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 2654435761 >> 13) }
    let rawURL = folder.appendingPathComponent("raw-\(size).bin")
    let documentURL = folder.appendingPathComponent("doc-\(size).bin")
    RawSafeSave.save(bytes, to: rawURL.path)
    let document = BlobDocument(fileURL: documentURL)
    document.blob = Data(bytes)
    try await document.saveThrowing(to: documentURL, for: .forCreating)
    let plainURL = folder.appendingPathComponent("plain-\(size).bin")
    let data = Data(bytes)
    var raw: [Double] = [], saved: [Double] = [], plain: [Double] = [], rawDeferred: [Double] = []
    var cpu = [0.0, 0.0, 0.0, 0.0]
    let warmUp = max(2, rounds / 10)
    let rawDeferredURL = folder.appendingPathComponent("raw-deferred-\(size).bin")
    RawSafeSave.save(bytes, to: rawDeferredURL.path)
    for round in 0..<(warmUp + rounds) {
        var times = [0.0, 0.0, 0.0, 0.0], cpuTimes = [0.0, 0.0, 0.0, 0.0]
        for step in 0..<4 {
            let kind = (round + step) % 4
            let startCPU = Measure.processCPUTime()
            let start = Measure.now()
            var heldByRaw: Int32 = -1
            switch kind {
            case 0: RawSafeSave.save(bytes, to: rawURL.path)
            case 1: try await document.saveThrowing(to: documentURL, for: .forOverwriting)
            case 2:
                try Coordinator().coordinate(writingItemAt: plainURL) { url in
                    try SafeSave.write(data, to: url, creating: false)
                }
            default: heldByRaw = RawSafeSave.save(bytes, to: rawDeferredURL.path, holdingReplaced: true)
            }
            times[kind] = Double(Measure.now() - start)
            // The replaced file is freed after the save, off its path: that work is counted in the
            // save's CPU time, and done before the next save is timed.
            SafeSave.waitForReplacedFilesToBeFreed()
            if heldByRaw >= 0 { close(heldByRaw) }
            cpuTimes[kind] = Double(Measure.processCPUTime() - startCPU)
        }
        guard round >= warmUp else { continue }
        raw.append(times[0]); saved.append(times[1]); plain.append(times[2]); rawDeferred.append(times[3])
        for kind in 0..<4 { cpu[kind] += cpuTimes[kind] / Double(rounds) }
    }
    // Bursts: saves back to back, each burst timed whole until the last release has run, so that
    // every free a save deferred is counted (in a burst, the next save meets it).
    var burstRatios: [Double] = []
    let burstLength = max(10, rounds / 8)
    for _ in 0..<5 {
        var start = Measure.now()
        for _ in 0..<burstLength { RawSafeSave.save(bytes, to: rawURL.path) }
        let rawBurst = Double(Measure.now() - start)
        start = Measure.now()
        for _ in 0..<burstLength { try await document.saveThrowing(to: documentURL, for: .forOverwriting) }
        SafeSave.waitForReplacedFilesToBeFreed()
        burstRatios.append(Double(Measure.now() - start) / rawBurst)
    }
    try await document.closeThrowing()
    if options.hops { try await HopRows.printRows(bytes: bytes, data: data, in: folder, rounds: rounds) }
    func ms(_ ns: Double) -> String { String(format: "%.3f ms", ns / 1e6) }
    print("| durable save of \(label) | \(ms(Measure.median(raw))) | \(ms(Measure.median(saved))) | \(ratioSummary(saved, over: raw)) | ≤ 1.15 × |")
    print("|   same, `SafeSave` in a coordinated write, no document | \(ms(Measure.median(raw))) | \(ms(Measure.median(plain))) | \(ratioSummary(plain, over: raw)) | |")
    print("|   the document's save ÷ a raw save that also frees the replaced file after it (`O_PATH` hold, as `SafeSave` does) | \(ms(Measure.median(rawDeferred))) | \(ms(Measure.median(saved))) | \(ratioSummary(saved, over: rawDeferred)) | |")
    print("|   \(burstLength) saves back to back, until the last one's release has run (every deferred free counted; median of 5 bursts, min–max) | | | \(String(format: "%.2f × (%.2f–%.2f)", Measure.median(burstRatios), burstRatios.min() ?? 0, burstRatios.max() ?? 0)) | |")
    print("|   CPU time of the process per save (mean; document / `SafeSave`) | \(ms(cpu[0])) | \(ms(cpu[1])) / \(ms(cpu[2])) | \(String(format: "%.2f × / %.2f ×", cpu[1] / cpu[0], cpu[2] / cpu[0])) | |")
}
if options.savesOnly { finish() }

// 2. Open of a 16 MiB document: peak resident memory in a fresh process.
let bigURL = folder.appendingPathComponent("big.bin")
try Data(repeating: 0x5A, count: 16 << 20).write(to: bigURL)
let child = Process()
child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
child.arguments = ["--open-rss", bigURL.path]
let pipe = Pipe()
child.standardOutput = pipe
try child.run()
let reply = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
child.waitUntilExit()
let numbers = reply.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
if numbers.count == 3 {
    let grown = Double(numbers[1] - numbers[0]) * 1024
    let fileSize = Double(16 << 20)
    print("| open of a 16 MiB document: peak RSS growth ÷ file size | | \(String(format: "%.1f MiB", grown / 1_048_576)) | \(String(format: "%.2f", grown / fileSize)) × | ≤ 2.5 × |")
}

// 3. PNG codec speed on a 1024×1024 RGBA photo-like image.
let codec = CodecBenchmark.measure(width: 1024, height: 1024)
print("| PNG encode / decode of 1024×1024 RGBA (MB/s of pixels) | | \(String(format: "%.0f / %.0f", codec.encodeMBps, codec.decodeMBps)) | \(codec.compressedBytes) bytes compressed | |")

// 4. Two processes editing one file: documents against the README's read-modify-write.
try TwoEditors.printRows(in: folder, appends: max(20, Int(400 * options.roundsScale)))

/// `--hops`: what a document save's thread hops cost, apart from the save. The first row saves
/// the plain `SafeSave` in a coordinated write the way documents once did (from the main actor,
/// on a serial queue, resumed through a continuation), round by round against the raw save; the
/// next two give the empty hop's time that way and through an actor whose executor is a serial
/// queue (how `CloudDocument`'s lifecycle operations hop now: `LifecycleRunner`).
@MainActor
enum HopRows {
    static func printRows(bytes: [UInt8], data: Data, in folder: URL, rounds: Int) async throws {
        let rawURL = folder.appendingPathComponent("hop-raw.bin")
        let plainURL = folder.appendingPathComponent("hop-plain.bin")
        RawSafeSave.save(bytes, to: rawURL.path)
        try SafeSave.write(data, to: plainURL, creating: false)
        let queue = DispatchQueue(label: "hop rows")
        let actor = QueueActor(queue: DispatchQueue(label: "hop rows actor"))
        var raw: [Double] = [], hopped: [Double] = [], empty: [Double] = [], actorHop: [Double] = []
        let warmUp = max(2, rounds / 10)
        for round in 0..<(warmUp + rounds) {
            var times = [0.0, 0.0, 0.0, 0.0]
            for step in 0..<4 {
                let kind = (round + step) % 4
                let start = Measure.now()
                switch kind {
                case 0: RawSafeSave.save(bytes, to: rawURL.path)
                case 1:
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        queue.async {
                            continuation.resume(with: Result {
                                try Coordinator().coordinate(writingItemAt: plainURL) { url in
                                    try SafeSave.write(data, to: url, creating: false)
                                }
                            })
                        }
                    }
                case 2:
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        queue.async { continuation.resume() }
                    }
                default:
                    guard await actor.bump() > 0 else { benchmarkFailed("hop rows: the actor did not run") }
                }
                times[kind] = Double(Measure.now() - start)
            }
            guard round >= warmUp else { continue }
            raw.append(times[0]); hopped.append(times[1]); empty.append(times[2]); actorHop.append(times[3])
        }
        func ms(_ ns: Double) -> String { String(format: "%.3f ms", ns / 1e6) }
        func us(_ ns: Double) -> String { String(format: "%.1f µs", ns / 1e3) }
        print("|   hops: `SafeSave` in a coordinated write on a queue, resumed through a continuation | \(ms(Measure.median(raw))) | \(ms(Measure.median(hopped))) | \(ratioSummary(hopped, over: raw)) | |")
        print("|   hops: main actor → queue → main actor through a continuation, empty (median) | | \(us(Measure.median(empty))) | | |")
        print("|   hops: main actor → actor on a queue → main actor, empty (median) | | \(us(Measure.median(actorHop))) | | |")
    }
}

/// An actor whose jobs run on a serial dispatch queue (as `LifecycleRunner`'s).
actor QueueActor {
    private let executor: QueueExecutor
    private var count = 0
    init(queue: DispatchQueue) { executor = QueueExecutor(queue: queue) }
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    func bump() -> Int { count += 1; return count }
}

/// Runs each job as a block on a serial dispatch queue.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue
    init(queue: DispatchQueue) { self.queue = queue }
    func enqueue(_ job: consuming ExecutorJob) {
        let unownedJob = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { unownedJob.runSynchronously(on: executor) }
    }
}
