import BenchmarkSupport
import Foundation
import LocalServers
import Glibc
import SyncAgent

/// A "device" whose agent runs inside the benchmark: a root folder with one container, synced by
/// a ``SyncEngine`` with a probed ``WebDAVStore`` on the collection of the same name. The timed
/// part is ``SyncEngine/syncOnce()`` alone; making the collection and probing are set-up.
struct EngineDevice {
    let root: URL
    let identifier: String
    let engine: SyncEngine

    /// The container folder (`ROOT/IDENTIFIER/`).
    var container: URL { root.appending(path: identifier, directoryHint: .isDirectory) }

    static func make(root: URL, identifier: String, server: ApacheServer) async throws(BenchmarkError) -> EngineDevice {
        try makeFolder(root.appending(path: identifier, directoryHint: .isDirectory))
        do {
            let top = try WebDAVStore(configuration: WebDAVConfiguration(baseURL: server.baseURL))
            guard let path = RemotePath(identifier) else { throw BenchmarkError("`\(identifier)` cannot name a collection") }
            try await top.makeFolder(path)
            let store = try WebDAVStore(configuration: WebDAVConfiguration(baseURL: server.url(identifier)))
            let capabilities = try await store.probe()
            guard capabilities.honoursConditions else { throw BenchmarkError("the probe says Apache ignores conditions") }
            let engine = try SyncEngine(configuration: SyncEngineConfiguration(identifier: identifier, root: root), store: store)
            return EngineDevice(root: root, identifier: identifier, engine: engine)
        } catch let error as BenchmarkError {
            throw error
        } catch {
            throw BenchmarkError("cannot set up the engine of \(identifier): \(error)")
        }
    }

    /// One pass, timed (nanoseconds); throws when a step failed or the server went away.
    func timedPass() async throws(BenchmarkError) -> Double {
        let start = Measure.now()
        let report = await engine.syncOnce()
        let elapsed = Double(Measure.now() - start)
        if report.didNotRun || report.wentOffline || !report.failed.isEmpty {
            let failures = report.failed.prefix(3).map { "\($0.step.path): \($0.error)" }
            throw BenchmarkError("the pass of \(identifier) did not complete (offline: \(report.wentOffline), "
                + "\(report.failed.count) failed steps: \(failures))")
        }
        return elapsed
    }
}

/// A "device" whose agent is a real `clouddocsd` child process: a root with one container, its
/// own `ubiquity.conf` naming the benchmark's server and the poll interval.
final class AgentDevice {
    let root: URL
    let identifier: String
    let configuration: URL
    private(set) var process: SpawnedServer?

    init(root: URL, identifier: String, server: ApacheServer, pollInterval: Double) throws(BenchmarkError) {
        self.root = root
        self.identifier = identifier
        try makeFolder(root.appending(path: identifier, directoryHint: .isDirectory))
        configuration = root.deletingLastPathComponent().appending(path: root.lastPathComponent + ".conf")
        let text = """
            provider = agent
            root = \(root.path)
            container = \(identifier)
            server = \(server.baseURL.absoluteString)
            poll-interval = \(pollInterval)

            """
        do { try text.write(to: configuration, atomically: true, encoding: .utf8) }
        catch { throw BenchmarkError("cannot write \(configuration.path): \(error)") }
    }

    /// The container folder (`ROOT/IDENTIFIER/`).
    var container: URL { root.appending(path: identifier, directoryHint: .isDirectory) }

    /// Starts `clouddocsd` (the one built next to this benchmark, or `executable`).
    func start(executable: String) throws(BenchmarkError) -> SpawnedServer {
        let environment = ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": configuration.path,
                           "CLOUDDOCUMENTS_UBIQUITY_ROOT": root.path,
                           "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": identifier,
                           "CLOUDDOCUMENTS_UBIQUITY_PROVIDER": "agent"]
        let process: SpawnedServer
        do {
            process = try SpawnedServer(executable: URL(fileURLWithPath: executable), arguments: [], environment: environment,
                                        logURL: root.deletingLastPathComponent().appending(path: root.lastPathComponent + ".log"))
        } catch {
            throw BenchmarkError("cannot start \(executable): \(error)")
        }
        self.process = process
        return process
    }

    /// The status the agent published last.
    var status: ContainerSyncStatus? { AgentFolder(root: root).status(of: identifier) }

    /// Whether the agent finished a pass that started after `since` and is idle with nothing queued.
    func isIdle(after since: Date) -> Bool {
        guard let status, case .idle = status.state, let scanned = status.scannedThrough, scanned >= since,
              status.queuedCount == 0 else { return false }
        return true
    }

    /// Throws when the agent process exited.
    func checkRunning() throws(BenchmarkError) {
        guard let process, process.isRunning else {
            throw BenchmarkError("clouddocsd of \(root.lastPathComponent) exited\n\(process?.logTail() ?? "")")
        }
    }

    func stop() { process?.stop() }
    deinit { stop() }
}
