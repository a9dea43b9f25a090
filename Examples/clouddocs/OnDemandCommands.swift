import Foundation
import Ubiquity

/// `pin`, `unpin`, and `download` of a folder: files on demand through the sync agent
/// (`provider = agent`), which keeps the pins (Docs/FilesOnDemand.md). Each leaves a request in
/// the agent's folder and waits (at most two minutes) until the agent says it handled it;
/// a refusal is printed as the error. Output: `pinned: PATH`, `unpinned: PATH`,
/// `download requested: PATH`.
enum OnDemandCommands {
    static let usageEntries: [UsageEntry] = [
        UsageEntry("pin", "pin <item>", "keep a file, package or folder always downloaded (downloaded now",
                   "if evicted; never evicted by the space budget) — sync agent only"),
        UsageEntry("unpin", "unpin <item>", "let a pinned item be evicted again"),
    ]

    /// How long a command waits for the agent's answer.
    static let answerWait: Duration = .seconds(120)

    static func run(_ command: String, _ arguments: [String]) async throws -> Int32? {
        guard command == "pin" || command == "unpin" else { return nil }
        guard arguments.count == 1 else {
            throw CommandLineUsageError("\(command) takes 1 argument, not \(arguments.count)", command: command)
        }
        let url = URL(fileURLWithPath: arguments[0]).standardizedFileURL
        try await send(command == "pin" ? .pin : .unpin, itemAt: url)
        printLine("\(command == "pin" ? "pinned" : "unpinned"): \(url.path)")
        return 0
    }

    /// Whether `url` is a folder that is not a package document (its items are downloaded one
    /// by one, through the agent).
    static func isPlainFolder(_ url: URL) -> Bool {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue else { return false }
        let extensions = (try? UbiquityAccount.shared.configuration().agent.packageExtensions) ?? []
        return !extensions.contains(url.pathExtension.lowercased())
    }

    /// Asks the agent of the item's container to carry out `command` on the item at `url` and
    /// waits for its answer.
    /// - Throws: ``UbiquityError`` when the item is outside every container or missing, or the
    ///   request cannot be left; ``AgentAnswer`` when the agent is not running, refuses, or does
    ///   not answer in time.
    static func send(_ command: AgentRequest.Command, itemAt url: URL) async throws {
        let account = UbiquityAccount.shared
        guard try account.configuration().root != nil else { throw UbiquityError.notSignedIn }
        guard let container = account.containerOfItem(at: url) else { throw UbiquityError.itemNotInContainer(path: url.path) }
        guard account.provider(for: container).kind == .agent else {
            throw AgentAnswer("\(command.rawValue) works with the sync agent only (`provider = agent` in ubiquity.conf)")
        }
        let base = container.url.standardizedFileURL.path
        let prefix = base.hasSuffix("/") ? base : base + "/"
        guard url.path.hasPrefix(prefix), url.path.count > prefix.count else { throw UbiquityError.itemNotInContainer(path: url.path) }
        let relative = String(url.path.dropFirst(prefix.count))
        let evicted = ((try? ItemPlaceholder.read(forItemAt: url)) ?? nil) != nil
        guard evicted || FileManager.default.fileExists(atPath: url.path) else { throw UbiquityError.itemNotFound(path: url.path) }
        let folder = AgentFolder(root: container.url.deletingLastPathComponent())
        guard folder.isAgentRunning else {
            throw AgentAnswer("the sync agent (clouddocsd) is not running (start it: systemctl --user start clouddocsd)")
        }
        let request = AgentRequest(command: command, container: container.identifier, path: relative)
        try folder.send(request)
        let deadline = ContinuousClock.now + answerWait
        while ContinuousClock.now < deadline {
            if let status = folder.status(of: container.identifier), status.handledRequests.contains(request.id) {
                if let reason = status.refusedRequests?[request.id] { throw AgentAnswer(reason) }
                return
            }
            guard folder.isAgentRunning else { throw AgentAnswer("the sync agent stopped before it answered") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw AgentAnswer("the sync agent did not answer within two minutes; the request stays queued")
    }
}

/// The agent's refusal of a request, or why no answer came.
struct AgentAnswer: LocalizedError {
    let message: String
    init(_ message: String) { self.message = message }
    var errorDescription: String? { message }
}
