import Foundation
import LocalServers
import SyncAgent

/// One "device": a root folder with the container `com.example.notes`, its own `ubiquity.conf`
/// (`provider = agent`, the demo's server, a 0.2 s poll) and its own `clouddocsd` process.
final class Device {
    static let container = "com.example.notes"

    let name: String
    let root: URL
    let configuration: URL
    private var agent: SpawnedServer?

    /// Creates `FOLDER/NAME/com.example.notes/Documents/` and `FOLDER/NAME.conf`.
    init(_ name: String, in folder: URL, server: URL) throws {
        self.name = name
        root = folder.appending(path: name, directoryHint: .isDirectory)
        configuration = folder.appending(path: "\(name).conf")
        let text = """
            provider = agent
            root = \(root.path)
            container = \(Self.container)
            server = \(server.absoluteString)
            poll-interval = 0.2

            """
        try text.write(to: configuration, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
    }

    var documents: URL {
        root.appending(path: Self.container, directoryHint: .isDirectory).appending(path: "Documents", directoryHint: .isDirectory)
    }

    func file(_ name: String) -> URL { documents.appending(path: name) }

    /// The environment that makes a program (the agent, `clouddocs`) one of this device's.
    var environment: [String: String] {
        ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": configuration.path,
         "CLOUDDOCUMENTS_UBIQUITY_ROOT": root.path,
         "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": Self.container,
         "CLOUDDOCUMENTS_UBIQUITY_PROVIDER": "agent"]
    }

    /// The status this device's agent published last (ROOT/.clouddocsd/status/ID.json).
    var status: ContainerSyncStatus? { AgentFolder(root: root).status(of: Self.container) }

    /// Starts `clouddocsd` for this device and waits until it published a status; `cleanup` stops it.
    /// - Throws: ``DemoFailure`` (with the agent's log) when it exits or never publishes.
    func startAgent(_ executable: URL, cleanup: Cleanup) async throws -> pid_t {
        let environment = environment, log = root.deletingLastPathComponent().appending(path: "agent-\(name).log")
        let agent = try cleanup.track {
            try SpawnedServer(executable: executable, arguments: [], environment: environment, logURL: log)
        }
        self.agent = agent
        try await Waiting.until("\(name)'s agent publishes its status", details: { agent.logTail() }) {
            guard agent.isRunning else { throw DemoFailure("\(name)'s clouddocsd exited\n\(agent.logTail())") }
            return status != nil
        }
        return agent.pid
    }

    /// Throws when the agent exited or refuses to sync (waiting for it would only hit the bound).
    func checkAgent() throws(DemoFailure) {
        guard let agent, agent.isRunning else { throw DemoFailure("\(name)'s clouddocsd is not running\n\(details())") }
        if let status, case .refused(let reason) = status.state {
            throw DemoFailure("\(name)'s clouddocsd refuses to sync: \(reason)\n\(details())")
        }
    }

    /// The agent's log and status, for failure messages.
    func details() -> String {
        (agent?.logTail() ?? "(\(name): no agent)") + "\nstatus \(name): "
            + (status.map { "\($0.state), errors: \($0.lastErrors.map(\.message)), conflicted: \($0.conflicted)" } ?? "none")
    }
}
