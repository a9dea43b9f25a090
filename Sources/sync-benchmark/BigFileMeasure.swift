import BenchmarkSupport
import Foundation
import Glibc
import SyncAgent

/// Measure 3: one large file up. Ours: a real `clouddocsd` child started on a container holding
/// the file, timed from its start until the file is complete on the server (a `PUT` lands under
/// its name only when complete: mod_dav_fs writes a temporary file and renames it); its peak RSS
/// is `VmHWM` from `/proc/PID/status` (the whole agent process: start-up, probe, pass, upload).
/// Raw: `curl -T` of the same file to the same server.
enum BigFileMeasure {
    static func run(_ options: Options, server: ApacheServer, work: URL) async throws(BenchmarkError) {
        let size = options.bigMiB << 20
        let device = try AgentDevice(root: work.appending(path: "big-device"), identifier: "big", server: server, pollInterval: 30)
        let source = device.container.appending(path: "big.bin")
        try writeBigFile(source, size: size)
        // The same bytes for curl, outside the container.
        let onServer = server.data.appending(path: "big/big.bin")

        let started = Date()
        let start = Measure.now()
        let agent = try device.start(executable: options.agent)
        var done: UInt64 = 0
        try waitUntil("the agent uploading \(options.bigMiB) MiB", timeout: 600, interval: 0.005,
                      details: { agent.logTail() }) { () throws(BenchmarkError) -> Bool in
            try device.checkRunning()
            if done == 0, sizeOf(onServer) == size { done = Measure.now() }
            return done != 0 && device.isIdle(after: started)
        }
        let ours = Double(done - start)
        let peakKiB = agent.statusValueKiB("VmHWM") ?? 0
        device.stop()
        guard sameBytes(source, onServer) else { throw BenchmarkError("ours: the server's big.bin differs from the device's") }

        let rawURL = server.baseURL.appending(path: "curl-big.bin")
        let raw = try runTool("/usr/bin/curl", ["-sS", "-f", "-o", "/dev/null", "-T", source.path, rawURL.absoluteString]).nanoseconds
        let rawOnServer = server.data.appending(path: "curl-big.bin")
        guard sizeOf(rawOnServer) == size else { throw BenchmarkError("curl: the server's curl-big.bin has \(sizeOf(rawOnServer)) bytes") }

        // Where our time goes: the two halves of the agent's upload step, each alone in this process.
        let snapshot = work.appending(path: "big-snapshot.bin")
        let copyTime = try timedCopy(source, to: snapshot)
        try? FileManager.default.removeItem(at: snapshot)
        let (storeTime, tagTime) = try await timedStoreUpload(source, server: server)

        let mbps = { (ns: Double) in format(Double(size) / 1_048_576 / (ns / 1e9), 0) + " MiB/s" }
        row("upload \(options.bigMiB) MiB file", "\(seconds(ours)) (\(mbps(ours)))", "\(seconds(raw)) (\(mbps(raw)), curl -T)",
            format(ours / raw), "≤ 1.1")
        row("  phases, each alone in-process: snapshot copy (read+write 1 MiB pieces) / WebDAVStore.upload (PUT: plain-socket client for http, URLSession for https) / "
            + "the tag's PROPFIND after it (Apache hashes the file; after the file is complete, so outside the timed span)",
            "\(seconds(copyTime)) (\(mbps(copyTime))) / \(seconds(storeTime)) (\(mbps(storeTime))) / \(seconds(tagTime))", "", "", "")
        row("agent peak RSS (clouddocsd VmHWM) during it", format(Double(peakKiB) / 1024, 1) + " MiB", "–", "–", "≤ 64 MiB")
        try? FileManager.default.removeItem(at: rawOnServer)
        try? FileManager.default.removeItem(at: onServer)
        try? FileManager.default.removeItem(at: source)
    }

    /// The time of a plain user-space copy of `source` to `destination` in 1 MiB pieces (what the
    /// agent's upload snapshot does), nanoseconds.
    static func timedCopy(_ source: URL, to destination: URL) throws(BenchmarkError) -> Double {
        let start = Measure.now()
        guard let input = fopen(source.path, "rb"), let output = fopen(destination.path, "wb") else {
            throw BenchmarkError("cannot open \(source.path) or \(destination.path)")
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = fread(&buffer, 1, buffer.count, input)
            if count == 0 { break }
            guard fwrite(buffer, 1, count, output) == count else { break }
        }
        fclose(input)
        fclose(output)
        return Double(Measure.now() - start)
    }

    /// The times of one `WebDAVStore.upload` of `source` (a new name on the server) and of the
    /// `PROPFIND` of its tag that follows it in the agent (Apache's PUT answer has none), nanoseconds.
    static func timedStoreUpload(_ source: URL, server: ApacheServer) async throws(BenchmarkError) -> (Double, Double) {
        do {
            let store = try WebDAVStore(configuration: WebDAVConfiguration(baseURL: server.baseURL))
            guard let path = RemotePath("store-big.bin") else { throw BenchmarkError("no remote path") }
            let start = Measure.now()
            _ = try await store.upload(source, to: path, condition: .mustNotExist) { _, _ in }
            let elapsed = Double(Measure.now() - start)
            let tagStart = Measure.now()
            guard try await store.item(at: path)?.tag != nil else { throw BenchmarkError("WebDAVStore.item: no tag for the uploaded file") }
            let tagElapsed = Double(Measure.now() - tagStart)
            let onServer = server.data.appending(path: "store-big.bin")
            guard sizeOf(onServer) == sizeOf(source) else { throw BenchmarkError("WebDAVStore.upload: wrong size on the server") }
            try? FileManager.default.removeItem(at: onServer)
            return (elapsed, tagElapsed)
        } catch let error as BenchmarkError {
            throw error
        } catch {
            throw BenchmarkError("WebDAVStore.upload of \(source.lastPathComponent): \(error)")
        }
    }

    /// Writes `size` bytes of random-looking data (a 1 MiB random block, its first word changed per block).
    static func writeBigFile(_ url: URL, size: Int) throws(BenchmarkError) {
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var generator = SystemRandomNumberGenerator()
        for index in block.indices { block[index] = generator.next() }
        guard let handle = fopen(url.path, "wb") else { throw BenchmarkError("cannot create \(url.path): errno \(errno)") }
        defer { fclose(handle) }
        var written = 0, counter: UInt64 = 0
        while written < size {
            counter += 1
            withUnsafeBytes(of: counter) { raw in for byte in 0..<8 { block[byte] = raw[byte] } }
            let count = min(block.count, size - written)
            guard fwrite(block, 1, count, handle) == count else { throw BenchmarkError("cannot write \(url.path): errno \(errno)") }
            written += count
        }
    }
}

/// The size of a regular file, or -1.
func sizeOf(_ url: URL) -> Int {
    var info = stat()
    guard stat(url.path, &info) == 0 else { return -1 }
    return Int(info.st_size)
}

/// Whether two files hold the same bytes (compared 1 MiB at a time).
func sameBytes(_ a: URL, _ b: URL) -> Bool {
    guard let first = FileHandle(forReadingAtPath: a.path), let second = FileHandle(forReadingAtPath: b.path) else { return false }
    defer { try? first.close(); try? second.close() }
    while true {
        // `read(upToCount:)` answers nil at the end of the file.
        do {
            let x = try first.read(upToCount: 1 << 20) ?? Data(), y = try second.read(upToCount: 1 << 20) ?? Data()
            if x != y { return false }
            if x.isEmpty { return true }
        } catch {
            return false
        }
    }
}
