import Foundation
import LocalServers

/// The demo's private Apache mod_dav server on 127.0.0.1 (`FileETag Digest`): its own
/// configuration, logs and lock database under `work` (nothing under /etc/apache2 is read or
/// changed; the system's apache2 service need not run), in a process group of its own that the
/// demo's ``Cleanup`` ends.
final class LocalApache {
    static let executable = "/usr/sbin/apache2"

    /// Whether Apache and its DAV modules are installed.
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: executable)
            && FileManager.default.fileExists(atPath: WebDAVApacheConfig.moduleDirectory + "/mod_dav_fs.so")
    }

    let baseURL: URL
    private let process: SpawnedServer

    /// Starts the server and waits until it accepts connections; `cleanup` stops it.
    /// - Throws: ``DemoFailure`` (with Apache's log) when it cannot be set up or does not start.
    init(work: URL, cleanup: Cleanup) async throws {
        let data = work.appending(path: "data", directoryHint: .isDirectory)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let port = try Loopback.freePort()
        guard let base = URL(string: "http://127.0.0.1:\(port)/") else { throw DemoFailure("no URL for port \(port)") }
        baseURL = base
        let configuration = try WebDAVApacheConfig.write(work: work, data: data, port: port, fileETag: "Digest")
        let process = try cleanup.track {
            try SpawnedServer(executable: URL(fileURLWithPath: Self.executable),
                              arguments: ["-f", configuration.path, "-DFOREGROUND"], environment: [:],
                              logURL: work.appending(path: "apache.log"))
        }
        self.process = process
        try await Waiting.until("Apache accepts connections on 127.0.0.1:\(port)", details: { process.logTail() }) {
            guard process.isRunning else { throw DemoFailure("Apache exited while starting\n\(process.logTail())") }
            return Loopback.accepts(port)
        }
    }

    var pid: pid_t { process.pid }
}
