import BenchmarkSupport
import CloudDocuments
import Foundation

/// (d) `otherVersionsOfItem(at:)` of an item with 100 stored versions, for information. The
/// versions are made through the public API as an app makes them: 100 saves of an open document
/// with unsaved changes over a file another writer replaced meanwhile, each keeping the replaced contents as an unresolved
/// conflict version (the store never drops those, so all 100 stay). 21 rounds after 3 of
/// warm-up; medians.
enum HundredVersionsBenchmark {
    @MainActor
    static func run(in base: URL) async throws {
        let folder = base.appendingPathComponent("hundred")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let item = folder.appendingPathComponent("doc.txt")
        try Data("the first text\n".utf8).write(to: item)
        let document = BlobDocument(fileURL: item)
        try await document.openThrowing()
        for index in 0..<100 {
            // Unsaved changes first: a document without any would reload the other writer's file.
            document.blob = Data("this document's text \(index)\n".utf8)
            document.updateChangeCount(.done)
            try Data("another writer's text \(index)\n".utf8).write(to: item, options: .atomic)
            try await document.saveThrowing(to: item, for: .forOverwriting)
        }
        try await document.closeThrowing()

        var all: [Double] = [], unresolved: [Double] = []
        var count = 0, conflicts = 0
        for round in 0..<24 {
            let allTime = try Measure.time { count = try FileVersion.otherVersionsOfItem(at: item).count }
            let unresolvedTime = try Measure.time { conflicts = try FileVersion.unresolvedConflictVersionsOfItem(at: item).count }
            if round >= 3 {
                all.append(allTime)
                unresolved.append(unresolvedTime)
            }
        }
        let median = Measure.median(all)
        row("(d) `otherVersionsOfItem` of an item with \(count) stored versions", "", ms(median) + " ms",
            format(median / Double(max(count, 1)) / 1000, 1) + " µs per version", "", "(information)")
        row("  same, `unresolvedConflictVersionsOfItem` (\(conflicts) unresolved)", "", ms(Measure.median(unresolved)) + " ms",
            "", "", "")
    }
}
