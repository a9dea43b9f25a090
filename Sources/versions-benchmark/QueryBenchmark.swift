import BenchmarkSupport
import CloudDocuments
import Foundation
import Glibc

/// The folder of (a): `doc.txt`, one Syncthing conflict copy of it, 100 conflict copies of other
/// files, and plain files: 10,000 entries in all.
enum ManyFiles {
    static let entries = 10_000
    static let otherCopies = 100

    /// Makes the folder under `base`; returns the URL of `doc.txt`.
    static func make(in base: URL) throws -> URL {
        let folder = base.appendingPathComponent("many")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var names = ["doc.txt", "doc.sync-conflict-20261123-051644-SUBNBV7.txt"]
        for index in 0..<otherCopies { names.append(String(format: "file-%05d.sync-conflict-20261123-051644-SUBNBV7.txt", index)) }
        var index = 0
        while names.count < entries {
            names.append(String(format: "file-%05d.txt", index))
            index += 1
        }
        let bytes = Array("some text\n".utf8)
        for name in names {   // plain open/write/close: FileManager's atomic writes take minutes here
            let fd = open(folder.path + "/" + name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0, write(fd, bytes, bytes.count) == bytes.count, close(fd) == 0 else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
        return folder.appendingPathComponent("doc.txt")
    }
}

/// (a) `unresolvedConflictVersionsOfItem(at:)` in a folder of 10,000 files ÷ one `readdir` of
/// that folder (opendir, readdir to the end, closedir; no stat). Interleaved, one call of each
/// per round, 31 rounds after 3 of warm-up; medians.
enum QueryBenchmark {
    static func run(in base: URL) throws {
        let item = try ManyFiles.make(in: base)
        let folder = item.deletingLastPathComponent().path
        var raw: [Double] = [], query: [Double] = []
        var found = 0
        for round in 0..<34 {
            let readdirTime = Measure.time { RawFileSystem.countEntries(folder) }
            let queryTime = try Measure.time { found = try FileVersion.unresolvedConflictVersionsOfItem(at: item).count }
            if round >= 3 {
                raw.append(readdirTime)
                query.append(queryTime)
            }
        }
        let ratio = Measure.median(query) / Measure.median(raw)
        row("(a) `unresolvedConflictVersionsOfItem` in a folder of 10,000 files (finds \(found)) ÷ one `readdir`",
            ms(Measure.median(raw)) + " ms", ms(Measure.median(query)) + " ms", format(ratio) + " ×", "≤ 2 ×",
            verdict(ratio, atMost: 2))
    }
}
