// key-value-benchmark: how long a key set and synchronized in one process takes to reach another
// process's change notification, beside the floor of the same path without the store (a durable
// rename of a small file into the folder, seen by a bare inotify watch in another process), and
// what `set` and `synchronize()` cost. Run with `swift run -c release key-value-benchmark`.
import Foundation
import Glibc
import BenchmarkSupport
import Ubiquity

let usage = """
    key-value-benchmark [--rounds N] [--profile-synchronize]

    Prints a Markdown table (p50 / p99 over N rounds, default 300, after 20 warm-up rounds):
      latency, same device      set + synchronize() in this process → the change handler of a
                                KeyValueStore of the same device in another process
      latency, another device   the same, the other process being another device (its own file
                                beside this one's, as a sync tool leaves them)
      raw floor                 write + fsync + rename + fsync of the folder of a 200-byte file →
                                a bare inotify watch of the folder in another process
      set                       KeyValueStore.set of a small integer (in memory)
      synchronize               set + synchronize() of one key, nobody watching, 100 keys stored
      idle synchronize          synchronize() with nothing to write or read
      load                      making a store over the same folder (reads and decodes the file)
    --profile-synchronize measures only the last four rows (for `perf record`).
    Everything lives in one temporary folder under $TMPDIR, removed at the end.
    """

var rounds = 300
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--child" {
    switch Array(arguments.dropFirst()) {
    case let rest where rest.count == 3 && rest[0] == "store": runStoreWatcher(folder: rest[1], device: rest[2])
    case let rest where rest.count == 2 && rest[0] == "raw": runRawWatcher(folder: rest[1])
    default: sayLine("error: bad child arguments")
    }
    exit(0)
}
var profileOnly = false
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--profile-synchronize":
        profileOnly = true
    case "--rounds":
        guard let value = arguments.first.flatMap(Int.init), value > 0 else { print(usage); exit(2) }
        rounds = value
        arguments.removeFirst()
    default:
        print(usage)
        exit(argument == "--help" || argument == "-h" ? 0 : 2)
    }
}

func row(_ what: String, _ samples: [Double], unit: String = "ms", scale: Double = 1e6) {
    let p50 = Measure.percentile(samples, 0.5) / scale, p99 = Measure.percentile(samples, 0.99) / scale
    print("| \(what) | \(String(format: "%.3f", p50)) \(unit) | \(String(format: "%.3f", p99)) \(unit) |")
    fflush(nil)
}

let work = FileManager.default.temporaryDirectory.appending(path: "key-value-benchmark-\(getpid())")
defer { try? FileManager.default.removeItem(at: work) }

/// Rounds of "write, then wait for the watcher's line naming `key(round)`".
func latencies(watcher: BenchmarkChild, rounds: Int, warmUp: Int = 20, key: (Int) -> String, write: (Int) throws -> Void) throws -> [Double] {
    guard watcher.readLine() == "ready" else { throw BenchmarkFailure("the watcher did not start") }
    var samples: [Double] = []
    for round in 0..<(warmUp + rounds) {
        let start = Measure.now()
        try write(round)
        let expected = "change " + key(round)
        while let line = watcher.readLine(), line != expected {
            if line.hasPrefix("error") { throw BenchmarkFailure(line) }
        }
        if round >= warmUp { samples.append(Double(Measure.now() - start)) }
    }
    watcher.stop()
    return samples
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The floor: a durable rename of a small file into a folder, seen by inotify in another process.
@MainActor func measureRawFloor() throws {
    let rawFolder = work.appending(path: "raw")
    try FileManager.default.createDirectory(at: rawFolder, withIntermediateDirectories: true)
    let payload = [UInt8](repeating: UInt8(ascii: "x"), count: 200)
    let folderDescriptor = open(rawFolder.path, O_RDONLY | O_DIRECTORY)
    let rawSamples = try latencies(watcher: try BenchmarkChild(["raw", rawFolder.path]), rounds: rounds, key: { "file-\($0)" }) { round in
        let temporary = rawFolder.path + "/.tmp", target = rawFolder.path + "/file-\(round)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0, write(descriptor, payload, payload.count) == payload.count, fsync(descriptor) == 0,
              close(descriptor) == 0, rename(temporary, target) == 0, fsync(folderDescriptor) == 0 else {
            throw BenchmarkFailure("raw write failed: errno \(errno)")
        }
    }
    close(folderDescriptor)
    row("raw floor: durable rename of a 200-byte file → inotify in another process", rawSamples)
}

do {
    print("| measure (\(rounds) rounds) | p50 | p99 |")
    print("| --- | --- | --- |")
    for (label, otherDevice) in [("latency, same device", "device-1"), ("latency, another device", "device-2")] where !profileOnly {
        let folder = work.appending(path: label.replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: ",", with: ""))
        let store = KeyValueStore(folder: folder, deviceIdentifier: "device-1")
        let watcher = try BenchmarkChild(["store", folder.path, otherDevice])
        let samples = try latencies(watcher: watcher, rounds: rounds, key: { "key-\($0)" }) { round in
            try store.set(.integer(Int64(round)), forKey: "key-\(round)")
            try store.synchronize()
        }
        row("set + synchronize() → another process's change handler, \(label == "latency, same device" ? "same device" : "another device")", samples)
    }

    if !profileOnly { try measureRawFloor() }

    let quiet = KeyValueStore(folder: work.appending(path: "quiet"), deviceIdentifier: "device-1")
    for index in 0..<100 { try quiet.set(.string("value \(index)"), forKey: "filler-\(index)") }
    try quiet.synchronize()
    var setSamples: [Double] = [], syncSamples: [Double] = []
    for round in 0..<(20 + rounds) {
        let start = Measure.now()
        try quiet.set(.integer(Int64(round)), forKey: "counter")
        let afterSet = Measure.now()
        try quiet.synchronize()
        let end = Measure.now()
        if round >= 20 {
            setSamples.append(Double(afterSet - start))
            syncSamples.append(Double(end - afterSet))
        }
    }
    row("set (in memory)", setSamples, unit: "µs", scale: 1e3)
    row("synchronize() of one changed key, 100 keys stored", syncSamples)

    var idleSamples: [Double] = [], loadSamples: [Double] = []
    for round in 0..<(20 + rounds) {
        let start = Measure.now()
        try quiet.synchronize()
        let afterIdle = Measure.now()
        _ = KeyValueStore(folder: work.appending(path: "quiet"), deviceIdentifier: "reader").dictionaryRepresentation
        let end = Measure.now()
        if round >= 20 {
            idleSamples.append(Double(afterIdle - start))
            loadSamples.append(Double(end - afterIdle))
        }
    }
    row("synchronize() with nothing changed (list the folder, stat the files)", idleSamples)
    row("a new store of 101 keys (read + decode + merge)", loadSamples)
} catch {
    print("key-value-benchmark: \(error)")
    exit(1)
}
