import BenchmarkSupport
import Foundation

/// Reads the workers' logs and the final files, prints one line per measure, then
/// `soak: PASS` or `soak: FAIL (reasons)`.
struct Report {
    let layout: RunLayout
    let workers: [(index: Int, role: WorkerRole, standardError: StandardErrorCollector.Counts)]
    let outcome: RunOutcome
    let lockDirectory: LockDirectoryInfo

    /// Prints the report; returns whether the run passed.
    func print() -> Bool {
        var failures: [String] = []
        let records = workers.map { WorkerRecords(layout.log($0.index)) }
        let final = FinalContents(layout)
        func roleOf(_ position: Int) -> WorkerRole { workers[position].role }

        // Appends.
        var confirmedOwner: [String: Int] = [:]
        var places: [String: String] = [:]
        for record in records { places.merge(record.places) { first, _ in first } }
        let filesPrefix = layout.files.path + "/"
        func place(_ line: String) -> String {
            guard let path = places[line] else { return "" }
            return ", " + (path.hasPrefix(filesPrefix) ? String(path.dropFirst(filesPrefix.count)) : path)
        }
        var confirmedByRole: [WorkerRole: Int] = [:]
        for (position, record) in records.enumerated() {
            for line in record.confirmed { confirmedOwner[line] = workers[position].index }
            confirmedByRole[roleOf(position), default: 0] += record.confirmed.count
        }
        line("appends confirmed: \(confirmedOwner.count) (documents \(confirmedByRole[.document] ?? 0), appenders \(confirmedByRole[.appender] ?? 0))")

        // LOST: confirmed, but neither in a final file nor in an unresolved conflict version.
        let lost = confirmedOwner.keys.filter { !final.lines.contains(Substring($0)) && !final.conflictLines.contains(Substring($0)) }.sorted()
        let lostInStore = lost.filter { final.storeLines.contains(Substring($0)) }
        var lostLine = "LOST: \(lost.count)"
        if !lost.isEmpty {
            lostLine += " (\(lostInStore.count) of them still in the version store, but not in an unresolved conflict version of a final file);"
                + " first: " + lost.prefix(8).map { "\($0) (worker \(confirmedOwner[$0] ?? -1)\(place($0)))" }.joined(separator: ", ")
            failures.append("\(lost.count) LOST")
        }
        line(lostLine)
        // Saved by a document (the save returned) but now nowhere: lost as well, though never confirmed.
        let savedNowhere = Set(records.flatMap(\.saved)).filter {
            confirmedOwner[$0] == nil && !final.lines.contains(Substring($0)) && !final.conflictLines.contains(Substring($0))
        }
        let savedNeverSeen = records.reduce(0) { $0 + ($1.counters["saved-never-seen"] ?? 0) }
        if !savedNowhere.isEmpty { failures.append("\(savedNowhere.count) saved document lines nowhere") }
        line("document lines saved but never seen in a read: \(savedNeverSeen); saved and now nowhere (LOST after save): \(savedNowhere.count)"
             + (savedNowhere.isEmpty ? "" : "; first: " + savedNowhere.sorted().prefix(8).map { $0 + " (" + place($0).dropFirst(2) + ")" }.joined(separator: ", ")))

        // TORN.
        let tornCount = final.tornLines + final.invalidFiles.count
        line("TORN: \(final.tornLines) lines, \(final.invalidFiles.count) files not valid UTF-8"
             + (tornCount == 0 ? "" : "; " + (final.invalidFiles + final.tornExamples).prefix(6).joined(separator: "; ")))
        if tornCount > 0 { failures.append("\(tornCount) TORN") }

        // HUNG and crashed.
        line("HUNG: \(outcome.hung.count)" + (outcome.hung.isEmpty ? "" : " (workers \(outcome.hung.map(String.init).joined(separator: ", ")))")
             + String(format: "; all stopped %.1f s after the stop", outcome.stopSeconds))
        if !outcome.hung.isEmpty { failures.append("\(outcome.hung.count) HUNG") }
        let crashed = outcome.crashed + outcome.startFailures
        line("crashed workers: \(crashed.count)" + (crashed.isEmpty ? "" : ": " + crashed.joined(separator: "; ")))
        if !crashed.isEmpty { failures.append("\(crashed.count) crashed") }
        let unfinished = records.indices.filter { !records[$0].finished && !outcome.hung.contains(workers[$0].index) }
        if !unfinished.isEmpty && crashed.isEmpty {
            line("workers that ended without finishing their log: \(unfinished.map { String(workers[$0].index) }.joined(separator: ", "))")
            failures.append("\(unfinished.count) unfinished")
        }

        // Errors.
        var errorTotals: [ErrorKind: Int] = [:]
        var messages: [String: Int] = [:]
        var messageOrder: [String] = []
        for (position, record) in records.enumerated() {
            for (kind, count) in record.errorCounts { errorTotals[kind, default: 0] += count }
            for (kind, message) in record.errorMessages where kind != .moveRace {
                let text = "worker \(workers[position].index): [\(kind.rawValue)] \(message)"
                if messages[text] == nil { messageOrder.append(text) }
                messages[text, default: 0] += 1
            }
        }
        let timeouts = errorTotals[.timeout] ?? 0, errors = errorTotals[.error] ?? 0, races = errorTotals[.moveRace] ?? 0
        line("coordination TIMEOUTS: \(timeouts); other errors: \(errors); move races (a document's old place just after a folder move, or a read refused for it by another document's save; counted, not failures): \(races)")
        for text in messageOrder.prefix(5) { line("  \(text)" + ((messages[text] ?? 0) > 1 ? " (× \(messages[text] ?? 0))" : "")) }
        if timeouts > 0 { failures.append("\(timeouts) TIMEOUTS") }
        if errors > 0 { failures.append("\(errors) errors") }

        // Anomalies: a document without its file, both names of the moving folder, …
        let anomalies = records.enumerated().flatMap { position, record in record.anomalies.map { "worker \(workers[position].index): \($0)" } }
            + final.structureProblems + final.readProblems
        line("anomalies: \(anomalies.count)" + (anomalies.isEmpty ? "" : ": " + anomalies.prefix(6).joined(separator: "; "))
             + "; documents whose last folder move's notice was still on its way at the stop (waited for, not failures): \(records.reduce(0) { $0 + ($1.counters["late-move-notices"] ?? 0) })")
        if !anomalies.isEmpty { failures.append("\(anomalies.count) anomalies") }

        // Progress of every worker that appends or moves.
        let idle = records.indices.filter { position in
            switch roleOf(position) {
            case .document, .appender: return records[position].confirmed.isEmpty
            case .mover: return (records[position].counters["folder-moves"] ?? 0) + (records[position].counters["file-moves"] ?? 0) == 0
            }
        }.filter { !outcome.hung.contains(workers[$0].index) }
        if !idle.isEmpty {
            line("workers that got nothing done: \(idle.map { "\(workers[$0].index) (\(roleOf($0).rawValue))" }.joined(separator: ", "))")
            failures.append("\(idle.count) workers got nothing done")
        }

        // Resources and rates.
        line("max open descriptors per worker: " + records.indices.map { "\(workers[$0].index) \(roleOf($0).rawValue) \(records[$0].maximumDescriptors)" }.joined(separator: ", "))
        line("lock directory: \(outcome.lockFilesAtEnd) files at the end, at most \(outcome.maximumLockFiles) during the run (\(lockDirectory.path))")
        let unanswered = workers.reduce(0) { $0 + $1.standardError.unansweredSaveRequests }
        line("stderr lines “\(StandardErrorCollector.unansweredSaveRequest)” (or “did not answer savePresentedItemChanges”): \(unanswered)")
        let otherStandardError = workers.flatMap { worker in worker.standardError.otherLines.map { "worker \(worker.index): \($0)" } }
        let standardErrorLines = workers.reduce(0) { $0 + $1.standardError.lines }
        if standardErrorLines > unanswered {
            line("other stderr lines: \(standardErrorLines - unanswered); first: " + otherStandardError.prefix(3).joined(separator: " | "))
        }
        var rates: [String] = []
        for role in [WorkerRole.document, .appender] {
            let count = workers.filter { $0.role == role }.count
            guard count > 0, outcome.seconds > 0 else { continue }
            rates.append(String(format: "%@ %.1f", role.rawValue, Double(confirmedByRole[role] ?? 0) / outcome.seconds / Double(count)))
        }
        line(String(format: "appends per second per worker (over %.0f s): ", outcome.seconds) + rates.joined(separator: ", "))
        let durations = records.flatMap(\.readDurations).sorted()
        if durations.isEmpty {
            line("save-request latency: not measured (no coordinated read finished in a document worker)")
        } else {
            let milliseconds = durations.map { Double($0) / 1e6 }
            func percentile(_ p: Double) -> Double { Measure.percentile(milliseconds, p) }
            line(String(format: "save-request latency, proxy — duration of the document workers' coordinated reads, which ask the other processes' documents to save first: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d reads)",
                        percentile(0.5), percentile(0.99), percentile(1), durations.count)
                 + (outcome.hung.isEmpty ? "" : "; reads still waiting when a worker hung are not in it"))
        }
        let counter = { (name: String) in records.reduce(0) { $0 + ($1.counters[name] ?? 0) } }
        line("conflict versions (unresolved): \(final.conflictVersions), holding \(final.conflictLines.subtracting(final.lines).count) lines not in the files;"
             + " documents in conflict at the end: \(counter("documents-in-conflict")); duplicate lines in the files: \(final.duplicates)")
        line("movers: \(counter("folder-moves")) folder moves, \(counter("file-moves")) file moves, \(counter("scratch-operations")) uncoordinated scratch operations, \(counter("raced")) skipped (another mover was first);"
             + " appenders: \(counter("not-found-retries")) retries at the other place of a moved file")
        if !final.strays.isEmpty {
            line("other files among the shared ones: \(final.strays.count): " + final.strays.prefix(5).joined(separator: ", "))
        }
        line(failures.isEmpty ? "soak: PASS" : "soak: FAIL (\(failures.joined(separator: ", ")))")
        return failures.isEmpty
    }

    private func line(_ text: String) {
        Swift.print(text)
    }
}
