import Foundation

/// The command line: which measures, their sizes, where `clouddocsd` is.
struct Options: Sendable {
    static let allMeasures = ["upload", "first-sync", "big", "latency", "idle", "open-evicted"]

    var measures = Set(allMeasures)
    /// Files of measure 1 (4 KiB each).
    var uploadFiles = 1_000
    /// Files of measures 2 and 5 (4 KiB each, in `folders` folders).
    var files = 10_000
    var folders = 100
    /// Size of measure 3's file, MiB.
    var bigMiB = 1_024
    /// Size of the evicted file that measure 6 opens, MiB.
    var evictedMiB = 100
    /// Edits of measure 4.
    var edits = 20
    /// Length of measure 5's idle window, seconds.
    var idleSeconds = 10.0
    /// The `clouddocsd` executable (default: next to this benchmark).
    var agent = Bundle.main.executableURL?.deletingLastPathComponent().appending(path: "clouddocsd").path ?? "clouddocsd"
    /// Keep the temporary folder (server data, logs) after the run.
    var keep = false

    static let usage = """
        usage: sync-benchmark [--only upload,first-sync,big,latency,idle,open-evicted] [--upload-files N] [--files N]
                              [--folders N] [--big-mib N] [--evicted-mib N] [--edits N] [--idle-seconds S] [--clouddocsd PATH] [--keep]
        Starts a private Apache mod_dav (FileETag Digest) on 127.0.0.1 and measures the sync agent
        beside rclone / curl doing the same work against the same server. Build clouddocsd too:
        swift build -c release --product clouddocsd && swift build -c release --product sync-benchmark
        """

    /// Parses `arguments`; returns a message for a bad one.
    static func parse(_ arguments: [String]) -> Result<Options, BenchmarkError> {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) -> String? { rest.isEmpty ? nil : rest.removeFirst() }
        while let argument = rest.first {
            rest.removeFirst()
            func number(_ low: Double) -> Double? {
                guard let text = value(argument), let number = Double(text), number >= low else { return nil }
                return number
            }
            switch argument {
            case "--only":
                let names = Set((value(argument) ?? "").split(separator: ",").map(String.init))
                guard !names.isEmpty, names.isSubset(of: allMeasures) else {
                    return .failure(BenchmarkError("--only takes a list of \(allMeasures.joined(separator: ","))"))
                }
                options.measures = names
            case "--upload-files": guard let n = number(1) else { return bad(argument) }; options.uploadFiles = Int(n)
            case "--files": guard let n = number(1) else { return bad(argument) }; options.files = Int(n)
            case "--folders": guard let n = number(1) else { return bad(argument) }; options.folders = Int(n)
            case "--big-mib": guard let n = number(1) else { return bad(argument) }; options.bigMiB = Int(n)
            case "--evicted-mib": guard let n = number(1) else { return bad(argument) }; options.evictedMiB = Int(n)
            case "--edits": guard let n = number(1) else { return bad(argument) }; options.edits = Int(n)
            case "--idle-seconds": guard let n = number(1) else { return bad(argument) }; options.idleSeconds = n
            case "--clouddocsd": guard let path = value(argument) else { return bad(argument) }; options.agent = path
            case "--keep": options.keep = true
            default: return .failure(BenchmarkError("unknown argument \(argument)\n\(usage)"))
            }
        }
        return .success(options)
    }

    private static func bad(_ argument: String) -> Result<Options, BenchmarkError> {
        .failure(BenchmarkError("\(argument) needs a positive number (or a path)\n\(usage)"))
    }
}
