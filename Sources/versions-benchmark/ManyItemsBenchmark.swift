import BenchmarkSupport
import CloudDocuments
import Foundation
import Glibc

/// (e) `unresolvedConflictVersionsOfItem(at:)` of a file that never had a version, in a store that
/// knows 1,000 other items (what every open of such a document asks), beside reading every
/// `item.json` of the store once — what the store did for that question before its path index.
/// The items are made through the public API (one version each). 21 rounds after 3 of warm-up;
/// medians.
enum ManyItemsBenchmark {
    static let items = 1_000

    static func run(in base: URL, store: URL) throws {
        let folder = base.appendingPathComponent("many-items")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let contents = base.appendingPathComponent("version-contents.txt")
        try Data("an older text\n".utf8).write(to: contents)
        for index in 0..<items {
            let item = folder.appendingPathComponent("item-\(index).txt")
            try Data("text \(index)\n".utf8).write(to: item)
            try FileVersion.addOfItem(at: item, withContentsOf: contents)
        }
        let fresh = folder.appendingPathComponent("never-versioned.txt")
        try Data("new\n".utf8).write(to: fresh)
        let records = store.appendingPathComponent("items").path
        var raw: [Double] = [], query: [Double] = []
        var found = -1, read = 0
        for round in 0..<24 {
            let rawTime = Measure.time { read = RawFileSystem.readEveryItemRecord(in: records) }
            let queryTime = try Measure.time { found = try FileVersion.unresolvedConflictVersionsOfItem(at: fresh).count }
            if round >= 3 {
                raw.append(rawTime)
                query.append(queryTime)
            }
        }
        guard read == items, found == 0 else { benchmarkFailed("(e): read \(read) records, found \(found) versions") }
        let ratio = Measure.median(query) / Measure.median(raw)
        row("(e) `unresolvedConflictVersionsOfItem` of a never-versioned file, store of \(items) items ÷ reading every `item.json`",
            ms(Measure.median(raw)) + " ms", ms(Measure.median(query)) + " ms", format(ratio) + " ×", "", "(information)")
    }
}
