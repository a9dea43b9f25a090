// sync-benchmark: the sync agent (clouddocsd) beside rclone / curl doing the same work against the
// same private Apache mod_dav server (FileETag Digest on 127.0.0.1), started and stopped here.
// Build: swift build -c release --product clouddocsd && swift build -c release --product sync-benchmark
// Run:   .build/release/sync-benchmark [--only upload,first-sync,big,latency,idle,open-evicted] (see --help)
import BenchmarkSupport
import Foundation
import Glibc

if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
    print(Options.usage)
    exit(0)
}
let options: Options
switch Options.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed): options = parsed
case .failure(let error): benchmarkFailed(error.description)
}
let needsAgent = !options.measures.isDisjoint(with: ["big", "latency", "idle", "open-evicted"])
if needsAgent && !FileManager.default.isExecutableFile(atPath: options.agent) {
    benchmarkFailed("no clouddocsd at \(options.agent): build it (swift build -c release --product clouddocsd) or pass --clouddocsd PATH")
}

let work = FileManager.default.temporaryDirectory.appending(path: "sync-benchmark-\(getpid())", directoryHint: .isDirectory)
do { try makeFolder(work) } catch { benchmarkFailed(error.description) }
chmod(work.path, 0o755)

/// Runs every selected measure against one server; stops the server whatever happens.
func runMeasures() async throws(BenchmarkError) {
    let server = try ApacheServer(work: work.appending(path: "apache"))
    defer { server.stop() }
    let rclone = try Rclone(server: server.baseURL, work: work)
    print("sync-benchmark: Apache mod_dav (FileETag Digest) on 127.0.0.1:\(server.port); rclone with its defaults "
          + "(--transfers 4 --checkers 8); ours = SyncEngine in-process (upload, first sync) or a clouddocsd child (the rest)")
    print("")
    row("measure", "ours", "raw", "ratio", "goal")
    row("---", "---", "---", "---", "---")
    if options.measures.contains("upload") { try await UploadMeasure.run(options, server: server, rclone: rclone, work: work) }
    if options.measures.contains("first-sync") { try await FirstSyncMeasure.run(options, server: server, rclone: rclone, work: work) }
    if options.measures.contains("big") { try await BigFileMeasure.run(options, server: server, work: work) }
    if options.measures.contains("latency") { try LatencyMeasure.run(options, server: server, work: work) }
    if options.measures.contains("idle") { try IdleMeasure.run(options, server: server, work: work) }
    if options.measures.contains("open-evicted") { try await OpenEvictedMeasure.run(options, server: server, work: work) }
}

var failure: BenchmarkError?
do { try await runMeasures() } catch { failure = error }
if options.keep {
    print("kept \(work.path)")
} else {
    try? FileManager.default.removeItem(at: work)
}
if let failure { benchmarkFailed(failure.description) }
