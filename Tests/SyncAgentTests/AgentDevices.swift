import Foundation
import Glibc
import Testing
import TestSupport
@testable import SyncAgent

/// Two "devices" on one machine for the agent's process tests: two roots (`A/`, `B/`) with one
/// container each, two `ubiquity.conf` files naming the same WebDAV server, and a real
/// `clouddocsd` process per device, started and stopped by the test.
final class AgentDevices: @unchecked Sendable {
    // @unchecked: used by the one test that made it; `agents` is only touched from that test.
    static let container = "com.example.notes"

    let scratch: Scratch
    let server: WebDAVServer
    private var agents: [String: ToolProcess] = [:]

    /// `extraConfiguration`: more `ubiquity.conf` lines for both devices.
    init(server: WebDAVServer, label: String = "agent-devices", extraConfiguration: String = "") throws {
        self.server = server
        scratch = try Scratch(label)
        for device in ["A", "B"] {
            try FileManager.default.createDirectory(at: documents(device), withIntermediateDirectories: true)
            let conf = """
            provider = agent
            root = \(root(device).path)
            container = \(Self.container)
            server = \(server.baseURL.absoluteString)
            poll-interval = 0.2
            \(extraConfiguration)
            """
            try Data(conf.utf8).write(to: configuration(device))
        }
    }

    func root(_ device: String) -> URL { scratch.url.appending(path: device, directoryHint: .isDirectory) }
    func container(_ device: String) -> URL { root(device).appending(path: Self.container, directoryHint: .isDirectory) }
    func documents(_ device: String) -> URL { container(device).appending(path: "Documents", directoryHint: .isDirectory) }
    func configuration(_ device: String) -> URL { scratch.url.appending(path: "\(device).conf") }
    func file(_ device: String, _ name: String) -> URL { documents(device).appending(path: name) }

    /// The environment of a program of `device` (the agent, `clouddocs`, a document process).
    func environment(_ device: String) -> [String: String] {
        ["CLOUDDOCUMENTS_UBIQUITY_CONFIG": configuration(device).path,
         "CLOUDDOCUMENTS_UBIQUITY_ROOT": root(device).path,
         "CLOUDDOCUMENTS_UBIQUITY_CONTAINERS": Self.container,
         "CLOUDDOCUMENTS_UBIQUITY_PROVIDER": "agent"]
    }

    /// Starts `device`'s agent and waits until it published a status.
    @discardableResult
    func startAgent(_ device: String) async throws -> ToolProcess {
        let agent = try ToolProcess(name: "clouddocsd \(device)", executable: ChildProcess.builtProductURL("clouddocsd"),
                                    arguments: [], environment: environment(device),
                                    logURL: scratch.url.appending(path: "agent-\(device).log"))
        agents[device] = agent
        try await Polling.until("\(device)'s agent publishes a status", details: { agent.logTail() + "\n" + self.server.logTail() }) {
            AgentFolder(root: root(device)).status(of: Self.container) != nil
        }
        return agent
    }

    func agent(_ device: String) -> ToolProcess? { agents[device] }

    /// `kill -9` of `device`'s agent.
    func killAgent(_ device: String) {
        guard let agent = agents.removeValue(forKey: device) else { return }
        kill(agent.pid, SIGKILL)
        agent.stop()
    }

    /// The status `device`'s agent published last.
    func status(_ device: String) -> ContainerSyncStatus? { AgentFolder(root: root(device)).status(of: Self.container) }

    /// Runs `clouddocs ARGUMENTS` as `device`.
    func clouddocs(_ device: String, _ arguments: [String]) throws -> ToolRun {
        try runExampleTool("clouddocs", arguments, in: scratch.url, environment: environment(device))
    }

    /// Waits until the file `name` on `device` holds `text`.
    func waitUntil(_ device: String, _ name: String, holds text: String) async throws {
        let url = file(device, name)
        try await Polling.until("\(name) on \(device) holds “\(text)”", details: { self.details() }) {
            (try? String(contentsOf: url, encoding: .utf8)) == text
        }
    }

    /// The agents' logs and statuses, for failure messages.
    func details() -> String {
        ["A", "B"].map { device in
            (agents[device]?.logTail() ?? "(\(device): no agent)") + "\nstatus \(device): "
                + (status(device).map { "\($0.state) errors: \($0.lastErrors.map(\.message)) conflicted: \($0.conflicted)" } ?? "none")
                + "\nfiles \(device): " + contents(device)
        }.joined(separator: "\n")
    }

    /// `name: text` of each file in `device`'s documents folder (the first 40 bytes).
    private func contents(_ device: String) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documents(device).path)) ?? []
        return names.sorted().map { name in
            let data = (try? Data(contentsOf: file(device, name))) ?? Data()
            return "\(name): \(String(decoding: data.prefix(40), as: UTF8.self))"
        }.joined(separator: ", ")
    }

    func stop() {
        for agent in agents.values { agent.stop() }
        agents = [:]
        scratch.remove()
    }
}
