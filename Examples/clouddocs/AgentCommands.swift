import Foundation
import Ubiquity

/// `agent status|pause|resume|sync-now|approve-deletions`: the sync agent (`clouddocsd`) of the
/// configured root, through its folder (`ROOT/.clouddocsd/`): `status` reads what the agent
/// publishes; the others leave a request and wait until the agent says it handled it.
enum AgentCommands {
    static let usageEntries: [UsageEntry] = [
        UsageEntry("agent status", "agent status [--watch] [--json]",
                   "what the agent does per container: state, queue, transfers",
                   "with progress, held deletions, last errors (--watch: again",
                   "at every change, until standard input ends)"),
        UsageEntry("agent pause", "agent pause [CONTAINER]", "stop transferring (changes queue) until resumed"),
        UsageEntry("agent resume", "agent resume [CONTAINER]", "transfer again"),
        UsageEntry("agent sync-now", "agent sync-now [CONTAINER]", "look at the server and the folder now"),
        UsageEntry("agent approve-deletions", "agent approve-deletions [CONTAINER]",
                   "carry out the deletions the guards hold"),
    ]

    /// How long a command waits for the agent to confirm a request.
    static let confirmationWait: Duration = .seconds(10)

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        guard command == "agent" else { return nil }
        var arguments = arguments
        guard !arguments.isEmpty else {
            throw CommandLineUsageError("agent needs a subcommand: status, pause, resume, sync-now or approve-deletions", command: "agent")
        }
        let subcommand = arguments.removeFirst()
        let command = "agent " + subcommand
        guard usageEntries.entry(for: command) != nil else {
            throw CommandLineUsageError("unknown agent subcommand “\(subcommand)”", command: "agent")
        }
        let configuration = try UbiquityAccount.shared.configuration()
        guard let root = configuration.root else { throw UbiquityError.notSignedIn }
        let folder = AgentFolder(root: root)
        if subcommand == "status" {
            let watch = arguments.contains("--watch"), json = arguments.contains("--json")
            if let extra = arguments.first(where: { $0 != "--watch" && $0 != "--json" }) {
                throw CommandLineUsageError("unexpected “\(extra)”", command: command)
            }
            return try await status(folder, identifiers: configuration.containerIdentifiers, watch: watch, json: json)
        }
        guard arguments.count <= 1 else { throw CommandLineUsageError("too many arguments", command: command) }
        guard let kind = AgentRequest.Command(rawValue: subcommand) else {
            throw CommandLineUsageError("unknown agent subcommand “\(subcommand)”", command: "agent")
        }
        guard folder.isAgentRunning else {
            FileHandle.standardError.write(Data("clouddocs: no agent runs for \(root.path) (start it: systemctl --user start clouddocsd)\n".utf8))
            return 1
        }
        let identifiers = arguments.first.map { [$0] } ?? configuration.containerIdentifiers
        // Approval applies to the deletions held now, as `agent status` shows them — not to a
        // set the agent may hold by the time it reads the request.
        let shownSets = kind == .approveDeletions
            ? identifiers.flatMap { folder.status(of: $0)?.heldDeletions.compactMap(\.setID) ?? [] } : nil
        let request = AgentRequest(command: kind, container: arguments.first, deletionSetIDs: shownSets)
        try folder.send(request)
        let deadline = ContinuousClock.now + confirmationWait
        while ContinuousClock.now < deadline {
            if identifiers.allSatisfy({ folder.status(of: $0)?.handledRequests.contains(request.id) == true }) {
                printLine("\(subcommand): done")
                return 0
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        FileHandle.standardError.write(Data("clouddocs: the agent did not confirm “\(subcommand)” within \(confirmationWait); it stays queued\n".utf8))
        return 1
    }

    /// Prints the status of every container (again at each change with `watch`).
    private static func status(_ folder: AgentFolder, identifiers: [String], watch: Bool, json: Bool) async throws -> Int32 {
        var last: [ContainerSyncStatus?] = []
        repeat {
            let running = folder.isAgentRunning
            let statuses = identifiers.map { folder.status(of: $0) }
            if statuses != last || last.isEmpty {
                last = statuses
                for line in render(statuses, identifiers: identifiers, running: running, json: json) { printLine(line) }
                if watch && !json { printLine("") }
            }
            if watch { try await Task.sleep(for: .milliseconds(200)) }
        } while watch && !Task.isCancelled && !StandardInput.hasEnded
        return 0
    }

    /// The lines `status` prints.
    static func render(_ statuses: [ContainerSyncStatus?], identifiers: [String], running: Bool, json: Bool) -> [String] {
        if json {
            let known = statuses.compactMap { $0 }
            let data = (try? JSONEncoder.agentStatus.encode(known)) ?? Data("[]".utf8)
            return [String(decoding: data, as: UTF8.self)]
        }
        var lines = ["agent: " + (running ? "running" : "not running")]
        for (identifier, status) in zip(identifiers, statuses) {
            guard let status else { lines.append("\(identifier): no status (the agent has not served it)"); continue }
            lines.append("\(identifier): \(describe(status.state)) — \(status.server)")
            if let lastSync = status.lastSync { lines.append("  last sync: \(lastSync.formatted(.iso8601))") }
            if status.queuedCount > 0 || !status.queued.isEmpty {
                lines.append("  queued: \(max(status.queuedCount, status.queued.count))")
                for item in status.queued.prefix(10) { lines.append("    \(item.action.rawValue) \(item.path)") }
            }
            for transfer in status.transfers {
                let percent = transfer.percent.map { String(format: "%.0f %%", $0) } ?? "\(transfer.bytesDone) bytes"
                lines.append("  \(transfer.isUpload ? "uploading" : "downloading") \(transfer.path): \(percent)")
            }
            for path in status.conflicted { lines.append("  conflict: \(path)") }
            for held in status.heldDeletions {
                lines.append("  held: \(held.count) deletions \(held.fromServer ? "from the server" : "made here")"
                             + " (approve: clouddocs agent approve-deletions \(identifier))"
                             + (held.setID.map { " [set \($0)]" } ?? "") + " e.g. \(held.examples.prefix(3).joined(separator: ", "))")
            }
            for error in status.lastErrors.suffix(5) {
                lines.append("  error \(error.date.formatted(.iso8601))\(error.path.map { " \($0)" } ?? ""): \(error.message)")
            }
        }
        return lines
    }

    private static func describe(_ state: ContainerSyncState) -> String {
        switch state {
        case .idle: "in sync"
        case .syncing: "syncing"
        case .paused: "paused"
        case .offline(let reason, _): "offline (\(reason)); changes wait"
        case .refused(let reason): "refused: \(reason)"
        }
    }
}

extension JSONEncoder {
    /// The encoder of `agent status --json`.
    static var agentStatus: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
