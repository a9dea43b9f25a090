import BenchmarkSupport
import Foundation
import Glibc

/// The benchmark's private Apache mod_dav server on 127.0.0.1: its own configuration, ServerRoot,
/// PidFile, logs and lock database under `work` (nothing under /etc/apache2 is read or changed),
/// `FileETag Digest` (strong tags), no body size limit, in the foreground in a process group of its
/// own. As root, its workers run as `www-data`, who owns the served folder.
///
/// The access log has one line per request (`METHOD PATH STATUS depth=DEPTH`), for counting the requests of a poll.
final class ApacheServer {
    static let executable = "/usr/sbin/apache2"
    static let modules = "/usr/lib/apache2/modules"
    static let workerUser = "www-data"

    let port: UInt16
    /// The served folder (the WebDAV root's files, as the server stores them).
    let data: URL
    let accessLog: URL
    private let process: SpawnedProcess
    /// The owner given to files the benchmark puts on the server directly (`nil`: not root).
    let owner: (uid: uid_t, gid: gid_t)?

    /// Starts the server in `work` (created) and waits until it accepts connections (at most 10 s).
    init(work: URL) throws(BenchmarkError) {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw BenchmarkError("\(Self.executable) is missing: apt-get install apache2")
        }
        data = work.appending(path: "data", directoryHint: .isDirectory)
        accessLog = work.appending(path: "logs/access.log")
        for name in ["data", "run", "lock", "logs"] {
            do { try FileManager.default.createDirectory(at: work.appending(path: name), withIntermediateDirectories: true) }
            catch { throw BenchmarkError("cannot create \(work.path)/\(name): \(error)") }
        }
        var userLines = ""
        if geteuid() == 0 {
            guard let entry = getpwnam(Self.workerUser) else { throw BenchmarkError("the user \(Self.workerUser) does not exist") }
            owner = (entry.pointee.pw_uid, entry.pointee.pw_gid)
            userLines = "User \(Self.workerUser)\nGroup #\(entry.pointee.pw_gid)"
            chmod(work.path, 0o755)
            lchown(data.path, entry.pointee.pw_uid, entry.pointee.pw_gid)
            lchown(work.appending(path: "lock").path, entry.pointee.pw_uid, entry.pointee.pw_gid)
        } else {
            owner = nil
        }
        port = try Self.freePort()
        guard let base = URL(string: "http://127.0.0.1:\(port)/") else { throw BenchmarkError("no URL for port \(port)") }
        baseURL = base
        let configuration = """
            ServerRoot "\(work.path)"
            DefaultRuntimeDir "\(work.path)/run"
            PidFile "\(work.path)/run/httpd.pid"
            ErrorLog "\(work.path)/logs/error.log"
            LogLevel warn
            Listen 127.0.0.1:\(port)
            ServerName 127.0.0.1
            \(userLines)
            LoadModule mpm_event_module \(Self.modules)/mod_mpm_event.so
            LoadModule authz_core_module \(Self.modules)/mod_authz_core.so
            LoadModule dav_module \(Self.modules)/mod_dav.so
            LoadModule dav_fs_module \(Self.modules)/mod_dav_fs.so
            StartServers 1
            ServerLimit 2
            ThreadsPerChild 16
            MaxRequestWorkers 32
            LimitRequestBody 0
            LogFormat "%m %U %>s depth=%{Depth}i" bench
            CustomLog "\(work.path)/logs/access.log" bench
            DavLockDB "\(work.path)/lock/DavLock"
            FileETag Digest
            DocumentRoot "\(data.path)"
            <Directory />
                AllowOverride None
                Require all denied
            </Directory>
            <Directory "\(data.path)">
                DAV On
                Options None
                AllowOverride None
                Require all granted
            </Directory>

            """
        let configurationURL = work.appending(path: "httpd.conf")
        do { try configuration.write(to: configurationURL, atomically: true, encoding: .utf8) }
        catch { throw BenchmarkError("cannot write \(configurationURL.path): \(error)") }
        process = try SpawnedProcess(executable: Self.executable, arguments: ["-f", configurationURL.path, "-DFOREGROUND"],
                                     logURL: work.appending(path: "logs/console.log"))
        let port = port, process = process
        do {
            try waitUntil("Apache accepting connections on port \(port)", timeout: 10, details: { process.logTail() }) {
                () throws(BenchmarkError) -> Bool in
                guard process.isRunning else { throw BenchmarkError("Apache exited at start\n\(process.logTail())") }
                return Self.accepts(port)
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

    /// A port the kernel reports free on 127.0.0.1 (bound to port 0, then released).
    private static func freePort() throws(BenchmarkError) -> UInt16 {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw BenchmarkError("socket: errno \(errno)") }
        defer { close(socketFD) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw BenchmarkError("bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        guard named == 0 else { throw BenchmarkError("getsockname: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port`.
    private static func accepts(_ port: UInt16) -> Bool {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { return false }
        defer { close(socketFD) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
