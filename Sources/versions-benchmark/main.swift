// versions-benchmark: FileVersion queries and additions next to the raw system calls, and how
// fast an open document notices a sync tool's conflict copy. Run with
// `swift run -c release versions-benchmark` (`--help` for the options).
import BenchmarkSupport
import CloudDocuments
import Foundation
import Glibc

let usage = """
    versions-benchmark [--only a,b,c,d,e] [--latency-rounds N] [--profile query|add]

    Prints a Markdown table, one row per measure, each measured beside its raw system-call
    baseline in the same run (medians of rounds; the latency row gives p50 / p99):
      a  unresolvedConflictVersionsOfItem(at:) in a folder of 10,000 files ÷ one readdir of it
      b  a Syncthing conflict copy renamed into the folder of an open CloudDocument (by another
         thread) → the document's state-change notification announcing .inConflict (p50 / p99)
      c  addOfItem(at:withContentsOf:) of a 16 MiB file ÷ a raw durable copy (O_EXCL temporary,
         copy_file_range or read/write 1 MiB — the faster, fsync, rename, fsync of the folder)
      d  otherVersionsOfItem(at:) of an item with 100 stored versions (for information)
      e  unresolvedConflictVersionsOfItem(at:) of a never-versioned file in a store of 1,000 items
         ÷ reading every item.json of the store (what that question cost before the path index)
    Everything lives in one temporary folder under $TMPDIR (the version store too, through
    CLOUDDOCUMENTS_VERSION_STORE), so both sides use the same disk; it is removed at the end.
      --latency-rounds N   rounds of b (default 200)
      --profile query|add  for profilers (valgrind --tool=callgrind): 200 queries of a, or 10
                           additions of c, and nothing else
    """

var sections = Set("abcde")
var latencyRounds = 200
var profile: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--only":
        sections = Set(arguments.popFirst() ?? "").intersection("abcde")
    case "--latency-rounds":
        latencyRounds = max(1, Int(arguments.popFirst() ?? "") ?? latencyRounds)
    case "--profile":
        profile = arguments.popFirst()
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n\n\(usage)\n".utf8))
        exit(2)
    }
}

let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cd-versionsbench-\(getpid())")
try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: base) }
// The version store on the same disk as the folders (read by every FileVersion call).
setenv("CLOUDDOCUMENTS_VERSION_STORE", base.appendingPathComponent("store").path, 1)

switch profile {
case "query":
    let item = try ManyFiles.make(in: base)
    for _ in 0..<200 { _ = try FileVersion.unresolvedConflictVersionsOfItem(at: item) }
    exit(0)
case "add":
    let item = try BigFile.make(in: base)
    for _ in 0..<10 {
        try FileVersion.addOfItem(at: item, withContentsOf: item)
        try FileVersion.removeOtherVersionsOfItem(at: item)
    }
    exit(0)
case nil:
    break
default:
    print(usage)
    exit(2)
}

print("CloudDocuments versions benchmark — \(ProcessInfo.processInfo.processorCount) cores, \(Date())")
print("")
print("| measure | raw syscalls | FileVersion / document | ratio / value | goal | verdict |")
print("| --- | --- | --- | --- | --- | --- |")

if sections.contains("a") { try QueryBenchmark.run(in: base) }
if sections.contains("b") { try await ConflictLatencyBenchmark.run(in: base, rounds: latencyRounds) }
if sections.contains("c") { try AddBenchmark.run(in: base) }
if sections.contains("d") { try await HundredVersionsBenchmark.run(in: base) }
if sections.contains("e") { try ManyItemsBenchmark.run(in: base, store: base.appendingPathComponent("store")) }
