import BenchmarkSupport
import Foundation
import Glibc

/// Measure 5: a real `clouddocsd` child (poll interval 1 s) with many synced files in many
/// folders, doing nothing. After it synced everything (set-up: the files were put into the served
/// folder directly and downloaded by the agent), a window of `--idle-seconds`: its CPU from
/// `/proc/PID/stat` (user + system), and the requests Apache answered in the window (its access
/// log) per poll, whole polls only, a poll starting with the `Depth: 1` listing of the container's root collection.
enum IdleMeasure {
    static func run(_ options: Options, server: ApacheServer, work: URL) throws(BenchmarkError) {
        let identifier = "idle"
        let served = server.data.appending(path: identifier)
        let expected = try makeFiles(in: served, count: options.files, size: 4096, folders: options.folders)
        server.handOver(served)
        let device = try AgentDevice(root: work.appending(path: "idle-device"), identifier: identifier, server: server, pollInterval: 1)
        let started = Date()
        let agent = try device.start(executable: options.agent)
        try waitUntil("the agent syncing \(options.files) files", timeout: 1200, interval: 0.2, details: { agent.logTail() }) { () throws(BenchmarkError) -> Bool in
            try device.checkRunning()
            return device.isIdle(after: started) && filesBelow(device.container).count >= expected.count
        }
        try checkTree(device.container, equals: expected, what: "ours: the idle device's container")
        // Let the pass after the sync (if one is under way) end before the window opens.
        usleep(2_000_000)

        let linesBefore = server.requestCount()
        guard let cpuBefore = agent.cpuSeconds() else { throw BenchmarkError("cannot read /proc/\(agent.pid)/stat") }
        let windowStart = Measure.now()
        usleep(UInt32(options.idleSeconds * 1e6))
        guard let cpuAfter = agent.cpuSeconds() else { throw BenchmarkError("cannot read /proc/\(agent.pid)/stat") }
        let window = Double(Measure.now() - windowStart) / 1e9
        try device.checkRunning()
        let rssKiB = agent.statusValueKiB("VmRSS") ?? 0
        device.stop()
        let lines = server.accessLines().dropFirst(linesBefore)
        // A poll starts with the `Depth: 1` listing of the container's root: the requests from the
        // first such listing in the window to the last, divided by the polls between, are whole polls.
        let pollStarts = lines.indices.filter { lines[$0].hasPrefix("PROPFIND /\(identifier)/ ") && lines[$0].hasSuffix("depth=1") }
        let bodies = lines.filter { $0.hasPrefix("GET ") || $0.hasPrefix("PUT ") }.count
        guard let first = pollStarts.first, let last = pollStarts.last, pollStarts.count >= 2 else {
            throw BenchmarkError("fewer than 2 polls in \(window) s (\(lines.count) requests): raise --idle-seconds")
        }
        let polls = pollStarts.count - 1
        let perPoll = Double(last - first) / Double(polls)
        let folders = options.folders + 1
        let cpu = (cpuAfter - cpuBefore) / window * 100
        row("idle, \(options.files) files in \(options.folders) folders: CPU over \(format(window, 0)) s",
            format(cpu, 2) + " % of a core", "–", "–", "≤ 1 %")
        row("idle: requests per poll (\(polls) whole polls; \(lines.count) requests in the window, \(bodies) GET/PUT)",
            format(perPoll, 1), "\(folders) collections", format(perPoll / Double(folders)), "≤ folders (\(folders))")
        row("  (agent RSS when idle)", format(Double(rssKiB) / 1024, 1) + " MiB", "", "", "")
    }
}
