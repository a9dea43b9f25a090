import BenchmarkSupport
import CloudDocuments
import ExampleDocuments
import Foundation

/// Two processes editing one file at once (issue 15), next to the same work without documents:
///
/// - **documents, saves only** (the goal's row): each process has a `TextDocument` open on the
///   file and, `appends` times, appends a line and saves — what an editor does; each save makes
///   the other document merge (at its next save) or reload;
/// - **documents**: the same, and after each save a coordinated read of the file — which, by
///   Apple's rule, first asks the other process's document to save (the save-request round trip,
///   timed on its own too), so an append can be saved twice;
/// - **read-modify-write** (the raw baseline): each process, `appends` times, makes the README's
///   coordinated read-modify-write (one coordinated write that reads the file, appends a line and
///   writes it back atomically — Foundation's atomic write, which does not `fsync`);
/// - the same read-modify-write made durable (`SafeSave`: `fsync` of the file and its folder, as a
///   document's save does), to show how much of the difference is the disk's.
///
/// Each side checks its own result: every line of both processes must be in the file at the end.
enum TwoEditors {
    /// `--editor document|document-saves|rmw|rmw-durable <path> <tag> <appends>`: the child's side. Prints "READY", waits
    /// for "go", works, then prints "DONE <read durations>;<save durations>" (documents; in ns,
    /// comma-separated) or
    /// "DONE" and exits.
    @MainActor static func runChild(_ arguments: [String]) async -> Never {
        guard arguments.count == 4, let appends = Int(arguments[3]) else {
            say("usage: --editor document|document-saves|rmw|rmw-durable <path> <tag> <appends>")
            exit(2)
        }
        let url = URL(fileURLWithPath: arguments[1])
        let tag = arguments[2]
        do {
            switch arguments[0] {
            case "document", "document-saves":
                let withReads = arguments[0] == "document"
                let document = TextDocument(fileURL: url)
                try await document.openThrowing()
                ready()
                var reads: [UInt64] = [], saves: [UInt64] = []
                for index in 0..<appends {
                    document.append("\(tag)-\(index)\n")
                    let saveStart = Measure.now()
                    try await document.saveThrowing(to: url, for: .forOverwriting)
                    saves.append(Measure.now() - saveStart)
                    guard withReads else { continue }
                    let start = Measure.now()
                    _ = try await Coordinator().coordinate(with: [.readingIntent(with: url)]) { intents in
                        try Data(contentsOf: intents[0].url)
                    }
                    reads.append(Measure.now() - start)
                }
                try await document.closeThrowing()
                say("DONE " + reads.map(String.init).joined(separator: ",") + ";" + saves.map(String.init).joined(separator: ","))
            default:
                let durable = arguments[0] == "rmw-durable"
                ready()
                for index in 0..<appends {
                    try Coordinator().coordinate(writingItemAt: url) { url in
                        let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
                        let updated = text + "\(tag)-\(index)\n"
                        if durable {
                            try SafeSave.write(Data(updated.utf8), to: url, creating: false)
                        } else {
                            try updated.write(to: url, atomically: true, encoding: .utf8)
                        }
                    }
                }
                say("DONE")
            }
            exit(0)
        } catch {
            say("ERROR \(error.localizedDescription)")
            exit(1)
        }
    }

    private static func ready() {
        say("READY")
        _ = readLine()
    }

    /// One line to the parent, unbuffered (standard output is a pipe).
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    struct Result {
        var appendsPerSecond: Double
        var readDurations: [Double]
        var saveDurations: [Double]
    }

    /// Runs two children of `kind` on a new file in `folder`; nil (and a message) when a child
    /// failed or a line is missing from the file.
    static func measure(_ kind: String, appends: Int, in folder: URL) throws -> Result? {
        let file = folder.appendingPathComponent("two-editors-\(kind).txt")
        try Data().write(to: file)
        let tags = ["A", "B"]
        let children = try tags.map { try BenchmarkChild(["--editor", kind, file.path, $0, "\(appends)"]) }
        for child in children where child.readLine() != "READY" {
            print("two editors (\(kind)): a child did not start")
            return nil
        }
        let start = Measure.now()
        for child in children { child.send() }
        var reads: [Double] = [], saves: [Double] = []
        for child in children {
            guard let line = child.readLine(), line.hasPrefix("DONE") else {
                print("two editors (\(kind)): a child failed")
                return nil
            }
            let lists = line.dropFirst(5).split(separator: ";", omittingEmptySubsequences: false)
            reads += (lists.first ?? "").split(separator: ",").compactMap { Double($0) }
            saves += (lists.dropFirst().first ?? "").split(separator: ",").compactMap { Double($0) }
        }
        let elapsed = Double(Measure.now() - start) / 1e9
        for child in children { child.stop() }
        let lines = Set((try String(contentsOf: file, encoding: .utf8)).split(separator: "\n").map(String.init))
        let missing = tags.flatMap { tag in (0..<appends).map { "\(tag)-\($0)" } }.filter { !lines.contains($0) }
        guard missing.isEmpty else {
            print("two editors (\(kind)): \(missing.count) lines missing from the file, first \(missing[0])")
            return nil
        }
        return Result(appendsPerSecond: Double(appends) / elapsed, readDurations: reads, saveDurations: saves)
    }

    /// Prints the table rows: appends per second per process, documents ÷ read-modify-write, and
    /// the save-request round trip (p50 / p99 of the documents' coordinated reads).
    ///
    /// The four kinds run in `rounds` rounds of `appends` appends per process each, in an order
    /// that rotates from round to round, and each ratio is the median of the per-round ratios
    /// (with the lowest and highest in parentheses): on a shared machine the load changes within
    /// seconds, and a ratio of two runs made a minute apart measured the load as much as the code.
    /// (Rounds of a few dozen appends, as before, lasted a tenth of a second: their ratios spread
    /// from 0.2 to 0.7.)
    static func printRows(in folder: URL, appends: Int, rounds: Int = 9) throws {
        let kinds = ["rmw", "rmw-durable", "document", "document-saves"]
        let perRound = max(20, appends)
        var rates: [String: [Double]] = [:]
        var reads: [Double] = [], saves: [Double] = []
        for round in 0..<rounds {
            for step in 0..<kinds.count {
                let kind = kinds[(round + step) % kinds.count]
                guard let result = try measure(kind, appends: perRound, in: folder) else { return }
                rates[kind, default: []].append(result.appendsPerSecond)
                reads += result.readDurations
                saves += result.saveDurations
            }
        }
        let raw = rates["rmw"] ?? [], durable = rates["rmw-durable"] ?? [], ours = rates["document"] ?? []
        let savesOnly = rates["document-saves"] ?? []
        func ratios(_ over: [Double], of ours: [Double] = ours) -> String {
            let values = zip(ours, over).map { $0 / $1 }
            guard let low = values.min(), let high = values.max() else { return "–" }
            return String(format: "%.2f × (%.2f–%.2f)", Measure.median(values), low, high)
        }
        let rate = { (values: [Double]) in String(format: "%.1f", Measure.median(values)) }
        print("| appends/s per process, 2 processes with open `TextDocument`s (append, save) ÷ 2 doing the README read-modify-write (median of \(rounds) rounds; each save makes the other document merge or reload) | \(rate(raw)) | \(rate(savesOnly)) | \(ratios(raw, of: savesOnly)) | ≥ 0.5 × |")
        print("|   same, each process also reading the file through a coordinated read after each save (Apple's rule: the read first asks the other document to save its unsaved append, so every append can be saved twice) | \(rate(raw)) | \(rate(ours)) | \(ratios(raw)) | |")
        print("|   the first row's documents ÷ 2 doing the read-modify-write durably (`SafeSave`: `fsync` of file and folder, like a document's save) | \(rate(durable)) | \(rate(savesOnly)) | \(ratios(durable, of: savesOnly)) | |")
        if !reads.isEmpty {
            let p50 = Measure.percentile(reads, 0.5) / 1e6, p99 = Measure.percentile(reads, 0.99) / 1e6
            print("| save-request round trip (a document's coordinated read that asks the other process's document to save first), p50 / p99 | | \(String(format: "%.2f / %.2f ms", p50, p99)) | | p99 ≤ 50 ms |")
        }
        if !saves.isEmpty {
            let p50 = Measure.percentile(saves, 0.5) / 1e6, p99 = Measure.percentile(saves, 0.99) / 1e6
            print("|   the documents' own saves (`saveThrowing`, 2 processes), p50 / p99 | | \(String(format: "%.2f / %.2f ms", p50, p99)) | | |")
        }
    }
}
