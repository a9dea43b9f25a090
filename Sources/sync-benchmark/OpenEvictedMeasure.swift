import BenchmarkSupport
import Foundation
import Glibc
import SyncAgent

/// Issue 19's first row: opening an evicted document. A real `clouddocsd` child syncs a container
/// holding one 100 MiB file (`--evicted-mib`), which is uploaded and then evicted through the agent
/// (`SyncAgentProvider.evictItem`). Ours, timed: one coordinated read of the file in this process
/// (files on demand enabled, as in an app), reading every byte in 1 MiB pieces as a document's
/// open does — it waits for the agent to download the file, then reads it. Raw: `curl` GET of the
/// same file from the same server into a file. The bytes read are checked against the original.
enum OpenEvictedMeasure {
    static func run(_ options: Options, server: ApacheServer, work: URL) async throws(BenchmarkError) {
        let size = options.evictedMiB << 20
        let device = try AgentDevice(root: work.appending(path: "evicted-device"), identifier: "evicted", server: server, pollInterval: 1)
        let documents = device.container.appending(path: "Documents", directoryHint: .isDirectory)
        try makeFolder(documents)
        let file = documents.appending(path: "big.bin")
        try BigFileMeasure.writeBigFile(file, size: size)
        let original = work.appending(path: "evicted-original.bin")
        do { try FileManager.default.copyItem(at: file, to: original) } catch { throw BenchmarkError("cannot copy \(file.path): \(error)") }
        defer { try? FileManager.default.removeItem(at: original) }
        let onServer = server.data.appending(path: "evicted/Documents/big.bin")

        let started = Date()
        let agent = try device.start(executable: options.agent)
        defer { device.stop() }
        try waitUntil("the agent uploading \(options.evictedMiB) MiB", timeout: 600, interval: 0.01, details: { agent.logTail() }) {
            () throws(BenchmarkError) -> Bool in
            try device.checkRunning()
            return sizeOf(onServer) == size && device.isIdle(after: started)
        }
        let container = UbiquityContainer(identifier: device.identifier, url: device.container)
        // Issue 19's second row: the blocks the file held (one link: nothing else keeps them),
        // and what is left after the eviction — the placeholder's.
        var whole = stat()
        guard lstat(file.path, &whole) == 0, whole.st_nlink == 1, whole.st_blocks > 0 else {
            throw BenchmarkError("big.bin is not a whole file with one link before the eviction")
        }
        do {
            try SyncAgentProvider().evictItem(at: file, in: container)
        } catch {
            throw BenchmarkError("the agent did not evict big.bin: \(error.localizedDescription)")
        }
        guard sizeOf(file) == -1, (try? ItemPlaceholder.read(forItemAt: file)) ?? nil != nil,
              let placeholder = ItemPlaceholder.placeholderURL(forItemAt: file) else {
            throw BenchmarkError("big.bin is not evicted")
        }
        var left = stat()
        guard lstat(placeholder.path, &left) == 0 else { throw BenchmarkError("no placeholder for big.bin") }
        let freed = Double(whole.st_blocks - left.st_blocks) / Double(whole.st_blocks)
        row("blocks freed by evicting a \(options.evictedMiB) MiB file (st_blocks of the file, then of its placeholder)",
            String(format: "%.3f %%", freed * 100), "\(whole.st_blocks) → \(left.st_blocks) blocks", "–", "≥ 99 %")

        FilesOnDemand.enable(root: device.root)
        let start = Measure.now()
        let read: Int
        do {
            read = try Coordinator().coordinate(readingItemAt: file) { url in try readAll(url) }
        } catch {
            throw BenchmarkError("the coordinated read of the evicted file failed: \(error)")
        }
        let ours = Double(Measure.now() - start)
        guard read == size, sameBytes(file, original) else { throw BenchmarkError("ours: the downloaded big.bin differs from the original") }

        // The raw run gets a quiet server: the agent's pass after the download (its listing makes
        // Apache hash the file) is over before curl starts.
        let opened = Date()
        try waitUntil("the agent's pass after the download", timeout: 120, interval: 0.01, details: { agent.logTail() }) {
            () throws(BenchmarkError) -> Bool in
            try device.checkRunning()
            return device.isIdle(after: opened)
        }
        let copy = work.appending(path: "evicted-curl.bin")
        let raw = try runTool("/usr/bin/curl", ["-sS", "-f", "-o", copy.path, server.baseURL.appending(path: "evicted/Documents/big.bin").absoluteString]).nanoseconds
        defer { try? FileManager.default.removeItem(at: copy) }
        guard sameBytes(copy, original) else { throw BenchmarkError("curl: the downloaded file differs from the original") }

        // The agent makes the download durable before it puts it in place (fsync); curl does not.
        // The same work raw: curl's file flushed too (`sync FILE`, an fsync).
        let flush = try runTool("/usr/bin/sync", [copy.path]).nanoseconds
        let mbps = { (ns: Double) in format(Double(size) / 1_048_576 / (ns / 1e9), 0) + " MiB/s" }
        row("open (coordinated read of every byte) of an evicted \(options.evictedMiB) MiB file", "\(seconds(ours)) (\(mbps(ours)))",
            "\(seconds(raw)) (\(mbps(raw)), curl GET)", format(ours / raw), "≤ 1.1")
        row("  the same ÷ curl GET then fsync of its file (the agent's download is durable before it is used)", "",
            "\(seconds(raw + flush))", format(ours / (raw + flush)), "")
    }

    /// Reads the whole file in 1 MiB pieces; returns the byte count.
    static func readAll(_ url: URL) throws -> Int {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchmarkError("cannot open \(url.path): errno \(errno)") }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { throw BenchmarkError("cannot read \(url.path): errno \(errno)") }
            if count == 0 { return total }
            total += count
        }
    }
}
