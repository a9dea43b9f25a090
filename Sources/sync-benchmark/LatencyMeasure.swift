import BenchmarkSupport
import Foundation
import Glibc

/// Measure 4: an edit on device A until the file is current on device B, with two real
/// `clouddocsd` processes polling every second. Each edit replaces A's file (a new name renamed
/// over it, as an editor's safe save does) and is timed until B's file holds the new bytes; edits
/// start at a random moment of B's poll cycle (a random pause of 0…1 s before each).
/// No raw tool does this: the goal is absolute.
enum LatencyMeasure {
    static func run(_ options: Options, server: ApacheServer, work: URL) throws(BenchmarkError) {
        let identifier = "latency"
        let a = try AgentDevice(root: work.appending(path: "latency-A"), identifier: identifier, server: server, pollInterval: 1)
        let b = try AgentDevice(root: work.appending(path: "latency-B"), identifier: identifier, server: server, pollInterval: 1)
        let name = "note.txt"
        let fileA = a.container.appending(path: name), fileB = b.container.appending(path: name)
        try write(Data("edit 0\n".utf8), to: fileA)
        _ = try a.start(executable: options.agent)
        _ = try b.start(executable: options.agent)
        try waitUntil("the first version reaching B", timeout: 60, details: { (a.process?.logTail() ?? "") + "\n" + (b.process?.logTail() ?? "") }) { () throws(BenchmarkError) -> Bool in
            try a.checkRunning(); try b.checkRunning()
            return (try? Data(contentsOf: fileB)) == Data("edit 0\n".utf8)
        }
        var samples: [Double] = []
        for edit in 1...options.edits {
            usleep(UInt32.random(in: 0..<1_000_000))
            let text = Data("edit \(edit) \(UUID().uuidString)\n".utf8)
            let start = Measure.now()
            try write(text, to: fileA)
            try waitUntil("edit \(edit) reaching B", timeout: 60, interval: 0.002,
                          details: { (a.process?.logTail() ?? "") + "\n" + (b.process?.logTail() ?? "") }) { () throws(BenchmarkError) -> Bool in
                try a.checkRunning(); try b.checkRunning()
                return (try? Data(contentsOf: fileB)) == text
            }
            samples.append(Double(Measure.now() - start))
        }
        a.stop()
        b.stop()
        let p50 = Measure.percentile(samples, 0.5), p99 = Measure.percentile(samples, 0.99)
        row("edit on A → current on B (poll 1 s, \(options.edits) edits), p50 / p99",
            "\(seconds(p50)) / \(seconds(p99))", "–", "–", "≤ 1 s / ≤ 3 s")
        row("  (min / max)", "\(seconds(samples.min() ?? .nan)) / \(seconds(samples.max() ?? .nan))", "", "", "")
    }

    /// Writes `data` to a new name beside `url` and renames it over `url`.
    static func write(_ data: Data, to url: URL) throws(BenchmarkError) {
        do { try data.write(to: url, options: .atomic) } catch { throw BenchmarkError("cannot write \(url.path): \(error)") }
    }
}
