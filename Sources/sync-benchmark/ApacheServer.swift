import BenchmarkSupport
import Foundation
import Glibc
import LocalServers

/// The benchmark's private Apache mod_dav server on 127.0.0.1: its own configuration, ServerRoot,
/// PidFile, logs and lock database under `work` (nothing under /etc/apache2 is read or changed),
/// `FileETag Digest` (strong tags), no body size limit, in the foreground in a process group of its
/// own (`LocalServers`: the same configuration and spawner as the tests' and the demo's server). As root, its workers run as `www-data`, who owns the served folder.
///
/// The access log has one line per request (`METHOD PATH STATUS depth=DEPTH`), for counting the requests of a poll.
final class ApacheServer {
    static let executable = "/usr/sbin/apache2"

    let port: UInt16
    /// The served folder (the WebDAV root's files, as the server stores them).
    let data: URL
    let accessLog: URL
    private let process: SpawnedServer
    /// The owner given to files the benchmark puts on the server directly (`nil`: not root).
    let owner: (uid: uid_t, gid: gid_t)?

    /// Starts the server in `work` (created) and waits until it accepts connections (at most 10 s).
    init(work: URL) throws(BenchmarkError) {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw BenchmarkError("\(Self.executable) is missing: apt-get install apache2")
        }
        data = work.appending(path: "data", directoryHint: .isDirectory)
        accessLog = work.appending(path: "logs/access.log")
        do { try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true) }
        catch { throw BenchmarkError("cannot create \(data.path): \(error)") }
        if geteuid() == 0, let entry = getpwnam(WebDAVApacheConfig.workerUser) {
            owner = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        } else {
            owner = nil
        }
        let port: UInt16
        let configurationURL: URL
        do {
            port = try Loopback.freePort()
            configurationURL = try WebDAVApacheConfig.write(work: work, data: data, port: port, fileETag: "Digest",
                                                            logFormat: "%m %U %>s depth=%{Depth}i",
                                                            extraDirectives: ["LimitRequestBody 0"])
        } catch {
            throw BenchmarkError("cannot set up Apache in \(work.path): \(error)")
        }
        self.port = port
        guard let base = URL(string: "http://127.0.0.1:\(port)/") else { throw BenchmarkError("no URL for port \(port)") }
        baseURL = base
        let process: SpawnedServer
        do {
            process = try SpawnedServer(executable: URL(fileURLWithPath: Self.executable),
                                        arguments: ["-f", configurationURL.path, "-DFOREGROUND"], environment: [:],
                                        logURL: work.appending(path: "logs/console.log"))
        } catch {
            throw BenchmarkError("cannot start Apache: \(error)")
        }
        self.process = process
        do {
            try waitUntil("Apache accepting connections on port \(port)", timeout: 10, details: { process.logTail() }) {
                () throws(BenchmarkError) -> Bool in
                guard process.isRunning else { throw BenchmarkError("Apache exited at start\n\(process.logTail())") }
                return Loopback.accepts(port)
            }
        } catch {
            process.stop()
            throw error
        }
    }

    /// `http://127.0.0.1:PORT/`.
    let baseURL: URL

    /// `http://127.0.0.1:PORT/NAME/`.
    func url(_ name: String) -> URL { baseURL.appending(path: name, directoryHint: .isDirectory) }

    /// Stops the server and its workers (its process group only).
    func stop() { process.stop() }

    deinit { stop() }

    /// The number of lines in the access log (requests answered so far).
    func requestCount() -> Int { accessLines().count }

    /// The access log's lines (`METHOD PATH STATUS depth=DEPTH`).
    func accessLines() -> [Substring] {
        guard let text = try? String(contentsOf: accessLog, encoding: .utf8) else { return [] }
        return text.split(separator: "\n")
    }

    /// Gives `path` and everything below to the workers' user (when running as root), so files
    /// the benchmark wrote into ``data`` can be served and replaced.
    func handOver(_ path: URL) {
        guard let owner else { return }
        lchown(path.path, owner.uid, owner.gid)
        guard let enumerator = FileManager.default.enumerator(atPath: path.path) else { return }
        while let relative = enumerator.nextObject() as? String {
            lchown(path.path + "/" + relative, owner.uid, owner.gid)
        }
    }
}
