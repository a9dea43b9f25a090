import Foundation
import LocalServers
import Glibc

/// A real WebDAV server started by a test on `127.0.0.1` at a free port, serving a fresh folder of
/// its own, patterned on `../shared/peers/webdav-*.sh`:
///
/// - ``Kind/apache(fileETag:)``: a private Apache 2.4 with mod_dav_fs (own config, ServerRoot,
///   PidFile, logs and lock database; nothing under /etc/apache2 read or changed), in the foreground
///   (`-DFOREGROUND`). `FileETag Digest` gives strong tags (the main server); Apache's default
///   `MTime Size` gives tags that are weak for about a second after each write. Apache refuses to
///   serve as root, so when the tests run as root its workers run as `www-data` and the served
///   folder belongs to that user. ``setUnavailable(_:)`` makes it answer 503 (with `Retry-After`)
///   through its own configuration: a mod_rewrite rule that applies while a flag file exists.
/// - ``Kind/wsgidav``: WsgiDAV 4 with cheroot from a virtualenv (see ``RequiredTool/wsgidav``).
/// - ``Kind/rclone``: `rclone serve webdav --dir-cache-time 0s`.
///
/// Ready when it answers an HTTP request (polled; no fixed sleep). ``stop()`` ends exactly the
/// processes it started (SIGTERM to the server's own process group — the server and the workers it
/// forked — SIGKILL after a grace period; see ``SpawnedServer``) and ``with(_:_:)`` removes
/// the scratch folder afterwards.
public final class WebDAVServer: Sendable {
    public enum Kind: Sendable, CustomStringConvertible {
        /// Apache mod_dav_fs with this `FileETag` directive value (`"Digest"`, `"MTime Size"`).
        case apache(fileETag: String)
        case wsgidav
        case rclone

        public var description: String {
            switch self {
            case .apache(let fileETag): "Apache (FileETag \(fileETag))"
            case .wsgidav: "WsgiDAV"
            case .rclone: "rclone serve webdav"
            }
        }

        /// The tool it needs.
        public var tool: RequiredTool {
            switch self {
            case .apache: .apache2
            case .wsgidav: .wsgidav
            case .rclone: .rclone
            }
        }
    }

    public let kind: Kind
    public let port: UInt16
    /// The scratch folder: config, logs and ``dataURL``.
    public let workURL: URL
    /// The folder the server serves as its root URL.
    public var dataURL: URL { workURL.appendingPathComponent("data", isDirectory: true) }
    /// `http://127.0.0.1:PORT/`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    private let process: SpawnedServer

    /// The flag file whose existence makes Apache answer 503.
    private var unavailableFlagURL: URL { workURL.appendingPathComponent("unavailable") }

    /// Starts a server of `kind` and waits until it answers. Throws ``RequiredTool/Missing`` when
    /// its program is missing, ``FixtureFailure`` (with the log) when it does not start.
    public init(_ kind: Kind) async throws {
        let executable = try kind.tool.require()
        self.kind = kind
        let template = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("clouddocs-webdav-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw FixtureFailure(description: "mkdtemp: errno \(errno)") }
        let work = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        workURL = work
        // The port is free when chosen, but another program (a parallel test's server) can take
        // it before this one binds: a start that fails with "address already in use" is tried
        // again on another port, a few times.
        var attempt = 0
        while true {
            attempt += 1
            let started: (port: UInt16, process: SpawnedServer)
            do {
                let data = work.appendingPathComponent("data", isDirectory: true)
                try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
                let port = try LoopbackHTTP.freePorts(1)[0]
                let (arguments, environment) = try Self.prepare(kind, work: work, data: data, port: port)
                started = (port, try SpawnedServer(executable: executable, arguments: arguments, environment: environment,
                                                   logURL: work.appendingPathComponent("server.log")))
            } catch {
                Scratch.removeTree(work.path)
                throw error
            }
            do {
                try await Self.waitUntilAnswering(kind, process: started.process, work: work, port: started.port)
                port = started.port
                process = started.process
                return
            } catch {
                let tail = Self.logTail(kind, process: started.process, work: work)
                started.process.stop()
                if attempt < Self.startAttempts, !started.process.isRunning,
                   tail.lowercased().contains("address already in use") {
                    try? FileManager.default.removeItem(at: work.appendingPathComponent("server.log"))
                    continue
                }
                Scratch.removeTree(work.path)
                throw error
            }
        }
    }

    /// How many times a server that found its port taken is started again on another.
    static let startAttempts = 5

    /// Runs `body` with a fresh server of `kind`; stops it and removes its folder afterwards.
    public static func with<Result>(_ kind: Kind, isolation: isolated (any Actor)? = #isolation,
                                    _ body: (WebDAVServer) async throws -> Result) async throws -> Result {
        let server = try await WebDAVServer(kind)
        let result: Result
        do {
            result = try await body(server)
        } catch {
            _ = try? await offCooperativePool { server.stop() }
            server.remove()
            throw error
        }
        _ = try? await offCooperativePool { server.stop() }
        server.remove()
        return result
    }

    /// Makes Apache answer every request with 503 and `Retry-After: 7` (`true`), or serve again
    /// (`false`): its own mod_rewrite rule tests for the flag file on each request.
    public func setUnavailable(_ unavailable: Bool) throws {
        guard case .apache = kind else { throw FixtureFailure(description: "only the Apache fixture can answer 503") }
        if unavailable {
            guard FileManager.default.createFile(atPath: unavailableFlagURL.path, contents: Data()) else {
                throw FixtureFailure(description: "cannot create \(unavailableFlagURL.path)")
            }
        } else {
            try? FileManager.default.removeItem(at: unavailableFlagURL)
        }
    }

    /// The last lines of the server's log (and Apache's error log), for failure messages.
    public func logTail() -> String { Self.logTail(kind, process: process, work: workURL) }

    private static func logTail(_ kind: Kind, process: SpawnedServer, work: URL) -> String {
        var text = "--- \(kind)\n" + process.logTail()
        let errorLog = work.appendingPathComponent("logs/error.log")
        if let apacheErrors = try? String(contentsOf: errorLog, encoding: .utf8) {
            text += "\n--- \(errorLog.path):\n" + apacheErrors.split(separator: "\n").suffix(15).joined(separator: "\n")
        }
        return text
    }

    /// Stops the server (its own process group only). Idempotent. Blocks up to the grace period:
    /// call it off the cooperative pool when that matters (``with(_:_:)`` does).
    public func stop() { process.stop() }

    /// Removes the scratch folder. Idempotent.
    public func remove() { Scratch.removeTree(workURL.path) }

    public var isRunning: Bool { process.isRunning }

    // MARK: Starting

    private static func waitUntilAnswering(_ kind: Kind, process: SpawnedServer, work: URL, port: UInt16) async throws {
        try await Polling.until("\(kind) to answer on 127.0.0.1:\(port)", details: { logTail(kind, process: process, work: work) }) {
            guard process.isRunning else {
                throw FixtureFailure(description: "\(kind) exited while starting\n\(logTail(kind, process: process, work: work))")
            }
            return (try? await offCooperativePool {
                try LoopbackHTTP.request(port: port, method: "OPTIONS", path: "/", timeout: 5)
            }) != nil
        }
    }

    private static func prepare(_ kind: Kind, work: URL, data: URL,
                                port: UInt16) throws -> (arguments: [String], environment: [String: String]) {
        switch kind {
        case .apache(let fileETag):
            let config = try WebDAVApacheConfig.write(work: work, data: data, port: port, fileETag: fileETag)
            return (["-f", config.path, "-DFOREGROUND"], [:])
        case .wsgidav:
            let config = work.appendingPathComponent("wsgidav.yaml")
            try WebDAVWsgiDAVConfig.text(data: data, port: port).write(to: config, atomically: true, encoding: .utf8)
            return (["-c", config.path], [:])
        case .rclone:
            return (["serve", "webdav", data.path, "--addr", "127.0.0.1:\(port)", "--dir-cache-time", "0s"],
                    ["RCLONE_CONFIG": "/dev/null"])
        }
    }
}
