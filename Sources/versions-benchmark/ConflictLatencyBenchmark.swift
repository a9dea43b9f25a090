import BenchmarkSupport
import CloudDocuments
import Foundation
import Glibc

/// (b) A Syncthing conflict copy of `doc.txt` renamed into the folder of the open document by
/// another thread → the document's state-change notification announcing `.inConflict` (the
/// moment an app sees it). The copy is written in a staging folder on the same disk first, so it
/// appears whole, by one `rename`, as Syncthing does it. After each round the conflict is resolved
/// through `FileVersion.resolve()` (which deletes the copy) and the benchmark waits for
/// `.inConflict` to clear before the next round.
enum ConflictLatencyBenchmark {
    /// How long a round waits for the document before giving up (the build has no live detection).
    static let timeout = 2.0

    @MainActor
    static func run(in base: URL, rounds: Int) async throws {
        let folder = base.appendingPathComponent("live")
        let staging = base.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        let item = folder.appendingPathComponent("doc.txt")
        try Data("the current text\n".utf8).write(to: item)
        let document = BlobDocument(fileURL: item)
        try await document.openThrowing()
        let timestamps = StateTimestamps(document)

        var latencies: [Double] = []
        var failure: String?
        for round in 0..<(rounds + 3) {   // 3 rounds of warm-up
            let name = String(format: "doc.sync-conflict-20261123-%02d%02d%02d-SUBNBV7.txt", round / 3600 % 24, round / 60 % 60, round % 60)
            let staged = staging.appendingPathComponent(name).path
            try Data("the other device's text, round \(round)\n".utf8).write(to: URL(fileURLWithPath: staged))

            timestamps.arm { $0.contains(.inConflict) }
            let appeared = RenameThread.rename(staged, to: folder.appendingPathComponent(name).path)
            guard let announced = await timestamps.reached(within: timeout) else {
                failure = "not announced within \(Int(timeout)) s (round \(round))"
                break
            }
            if round >= 3 { latencies.append(Double(announced) - Double(appeared.value)) }

            timestamps.arm { !$0.contains(.inConflict) }
            // Off the main actor: resolving is a coordinated write of the item, and the open
            // document gives way to a writer on the main actor (a call from it would deadlock).
            try await Task.detached {
                for conflict in try FileVersion.unresolvedConflictVersionsOfItem(at: item) { try conflict.resolve() }
            }.value
            guard await timestamps.reached(within: timeout) != nil || !document.documentState.contains(.inConflict) else {
                failure = "`.inConflict` not cleared within \(Int(timeout)) s of resolving (round \(round))"
                break
            }
            unlink(folder.appendingPathComponent(name).path)   // in case resolving left it
        }
        try await document.closeThrowing()
        let measured: String
        let value: String
        let met: String
        if let failure, latencies.isEmpty {
            measured = failure
            value = "—"
            met = "**missed**"
        } else {
            let p50 = Measure.percentile(latencies, 0.5), p99 = Measure.percentile(latencies, 0.99)
            measured = "\(ms(p50, 1)) / \(ms(p99, 1)) ms" + (failure.map { " (then \($0))" } ?? "")
            value = "p99 \(ms(p99, 1)) ms"
            met = failure == nil ? verdict(p99 / 1e6, atMost: 250) : "**missed**"
        }
        row("(b) conflict copy renamed in → `.inConflict` announced, p50 / p99 of \(latencies.count) rounds",
            "", measured, value, "p99 ≤ 250 ms", met)
    }
}

/// Does one `rename` on a thread of its own, returning the monotonic time taken just before it.
enum RenameThread {
    /// `@unchecked Sendable`: written by the thread before it signals, read after the wait.
    final class Box: @unchecked Sendable { var value: UInt64 = 0 }

    static func rename(_ from: String, to: String) -> Box {
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.value = Measure.now()
            Glibc.rename(from, to)
            done.signal()
        }
        done.wait()
        return box
    }
}
