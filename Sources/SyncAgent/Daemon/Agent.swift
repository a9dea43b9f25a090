import FileCoordination
import Foundation
import Synchronization

/// The agent of one root: everything `clouddocsd` does. It takes the root's ``AgentLock`` (one
/// agent per root), probes the server, runs one ``SyncEngine`` per configured container, carries
/// out the requests `clouddocs agent …` leaves (``RequestInbox``), and publishes each container's
/// status for apps and the command line (``StatusPublisher``).
///
/// A container whose server cannot be used safely (it ignores `If-Match` / `If-None-Match`, so a
/// write could silently replace someone else's, or it gives files no ETag) is **refused**: its
/// status says why and nothing of it is transferred. The other containers are synced. A server
/// whose tags are weak for a moment or survive a same-size rewrite is used in the engine's
/// safe mode, which the status's `server` text names.
///
/// Threading: ``run()`` runs until its task is cancelled (clouddocsd cancels it on SIGTERM and
/// SIGINT); the engines run as child tasks; requests are taken on a task started by the request
/// watcher's thread. The status of each container is published from whichever thread changed it.
public final class Agent: Sendable {
    /// Why the agent cannot start.
    public enum StartError: Error, CustomStringConvertible {
        case notSignedIn
        case noServer
        case noContainers
        case configuration(UbiquityError)
        case lock(String)

        public var description: String {
            switch self {
            case .notSignedIn: "no root is configured: set `root = /path` in ubiquity.conf or CLOUDDOCUMENTS_UBIQUITY_ROOT"
            case .noServer: "no server is configured: set `server = https://…` in ubiquity.conf or \(AgentSettings.serverEnvironmentKey)"
            case .noContainers: "no container is configured: add `container = IDENTIFIER` lines to ubiquity.conf"
            case .configuration(let error): error.localizedDescription
            case .lock(let reason): reason
            }
        }
    }

    let root: URL
    let folder: AgentFolder
    let identifiers: [String]
    let settings: AgentSettings
    let password: String?
    let guards: SyncGuards
    let publisher: StatusPublisher
    /// The engines by container identifier, once made, and the download requests that came for
    /// a container before its engine was made (handed to it when it is; see ``takeRequests()``).
    private let engines = Locked<EngineTable>(EngineTable())
    /// The identifiers of the requests handled, newest last (at most 32), for every status.
    private let handled = Locked<[String]>([])
    /// Why requests among ``handled`` were refused, by identifier.
    private let refused = Locked<[String: String]>([:])
    /// The last status of each container, republished when a request was handled.
    private let statuses = Locked<[String: ContainerSyncStatus]>([:])
    /// The `server` text of each connected container (with its safe mode), put in every status.
    private let serverTexts = Locked<[String: String]>([:])

    /// The agent for `configuration` (its root, containers and agent settings), with the password
    /// taken from `environment` or the password file.
    /// - Throws: ``StartError`` when the configuration lacks a root, a server or containers, or
    ///   the password file may not be used.
    public init(configuration: UbiquityConfiguration, environment: [String: String]) throws(StartError) {
        guard let root = configuration.root else { throw .notSignedIn }
        guard configuration.agent.server != nil else { throw .noServer }
        guard !configuration.containerIdentifiers.isEmpty else { throw .noContainers }
        self.root = root
        folder = AgentFolder(root: root)
        identifiers = configuration.containerIdentifiers
        settings = configuration.agent
        do { password = try configuration.agent.password(environment: environment) } catch { throw .configuration(error) }
        guards = SyncGuards(heldDeletionShare: configuration.agent.holdDeletionsOverShare,
                            heldDeletionMaximum: configuration.agent.holdDeletionsOverCount)
        publisher = StatusPublisher(folder: folder)
        // The agent's coordinated accesses of a package then cover everything inside it.
        for pathExtension in settings.packageExtensions { Coordinator.registerPackageExtension(pathExtension) }
    }

    /// Serves the root until the calling task is cancelled. Returns after every engine stopped.
    /// - Throws: ``StartError/lock(_:)`` when another agent serves this root (nothing was done).
    public func run() async throws(StartError) {
        let lock: AgentLock
        do { lock = try AgentLock(folder: folder) } catch { throw .lock(error.description) }
        let watcher = try? RequestWatcher(folder: folder) { [self] in
            Task { await self.takeRequests() }
        }
        await withTaskGroup(of: Void.self) { group in
            for identifier in identifiers {
                group.addTask { await self.serve(identifier) }
            }
        }
        watcher?.stop()
        withExtendedLifetime(lock) {}
    }

    /// How long a refused container waits before the agent probes its server again (the user may
    /// have fixed the password or the server meanwhile).
    static let refusalRetry: Duration = .seconds(60)

    /// Probes the container's server and runs its engine until cancelled. A refused container
    /// (unsafe server, refused credentials) keeps its `refused` status and is probed again every
    /// ``refusalRetry``; the agent keeps serving the other containers meanwhile.
    private func serve(_ identifier: String) async {
        guard let server = settings.server else { return }
        let display = WebDAVConfiguration(baseURL: server).displayURL
        let base = server.appending(path: identifier, directoryHint: .isDirectory)
        var status = ContainerSyncStatus(identifier: identifier, server: display + identifier + "/", state: .syncing)
        var connected: WebDAVStore?
        while connected == nil && !Task.isCancelled {
            do {
                let top = try WebDAVStore(configuration: configuration(for: server))
                let store = try WebDAVStore(configuration: configuration(for: base))
                try await connect(top, store, identifier: identifier, status: &status)
                connected = store
            } catch {
                status.state = .refused(reason: error.description)
                answerEarlyDownloads(identifier, reason: "the agent refuses this container: \(error.description)")
                publish(status)
                try? await Task.sleep(for: Self.refusalRetry)
            }
        }
        guard let store = connected else { return }
        let engine: SyncEngine
        var engineConfiguration = SyncEngineConfiguration(identifier: identifier, root: root, guards: guards,
                                                          pollInterval: .milliseconds(Int(settings.pollInterval * 1000)),
                                                          packageExtensions: Coordinator.packageExtensions)
        engineConfiguration.spaceBudget = settings.spaceBudget
        do {
            engine = try SyncEngine(configuration: engineConfiguration, store: store) { [self] status in publish(status) }
        } catch {
            status.state = .refused(reason: "the journal cannot be opened: \(error)")
            publish(status)
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return
        }
        let early = engines.withLock { table in
            table.engines[identifier] = engine
            return table.early.removeValue(forKey: identifier) ?? []
        }
        for request in early {
            if let reason = await engine.requestDownload(request.path, requestID: request.id) {
                refused.withLock { $0[request.id] = reason }
            }
        }
        await takeRequests()
        await engine.run()
    }

    /// Creates the container's collection and probes the server, retrying with a back-off while it
    /// cannot be reached. Throws when the server refuses or cannot be used safely.
    private func connect(_ top: WebDAVStore, _ store: WebDAVStore, identifier: String,
                         status: inout ContainerSyncStatus) async throws(RemoteStoreError) {
        var delay = 1.0
        while true {
            do {
                guard let path = RemotePath(identifier) else { throw RemoteStoreError.refused("`\(identifier)` cannot name a collection") }
                try await top.makeFolder(path)
                let capabilities = try await store.probe()
                if let refusal = Self.refusal(of: capabilities) { throw RemoteStoreError.refused(refusal) }
                let text = Self.serverDescription(status.server, capabilities)
                serverTexts.withLock { $0[identifier] = text }
                status.server = text
                return
            } catch let error as RemoteStoreError where error.isTransient {
                status.state = .offline(reason: error.description, retryAt: Date().addingTimeInterval(delay))
                answerEarlyDownloads(identifier, reason: SyncEngine.offlineReason(error.description))
                publish(status)
                try? await Task.sleep(for: .seconds(delay * Double.random(in: 0.5...1)))
                if Task.isCancelled { throw .cancelled }
                delay = min(delay * 2, 300)
            } catch let error as RemoteStoreError {
                throw error
            } catch {
                throw .transport("\(error)")
            }
        }
    }

    /// Why a server with `capabilities` cannot be used, or `nil` when it can.
    static func refusal(of capabilities: RemoteCapabilities) -> String? {
        if !capabilities.honoursConditions {
            return "the server ignores If-Match / If-None-Match, so an upload could silently "
                + "replace another device's edit; use a server that honours them (Apache mod_dav, Nextcloud, WsgiDAV)"
        }
        if !capabilities.hasTags {
            return "the server gives files no ETag, so the agent cannot see what changed there nor guard "
                + "its writes; use a server that does (Apache mod_dav, Nextcloud, WsgiDAV)"
        }
        return nil
    }

    /// The status's `server` text: the collection, and the safe mode when the server's tags
    /// alone cannot guard writes (``RemoteCapabilities/isSafeForConditionalWrites``), e.g.
    /// `https://host/dav/id/ (safe mode: tags weak for a second after a write)`.
    static func serverDescription(_ collection: String, _ capabilities: RemoteCapabilities) -> String {
        guard !capabilities.isSafeForConditionalWrites else { return collection }
        var reasons: [String] = []
        if !capabilities.strongTagsImmediately { reasons.append("tags weak for a second after a write") }
        if !capabilities.tagChangesOnEveryWrite { reasons.append("a same-size rewrite within a second keeps the tag") }
        return collection + " (safe mode: " + reasons.joined(separator: "; ")
            + " — each write re-checks the item and waits until its tag can guard it)"
    }

    private func configuration(for url: URL) -> WebDAVConfiguration {
        WebDAVConfiguration(baseURL: url, user: settings.user, password: password, allowsInsecureHTTP: settings.allowsInsecureHTTP)
    }

    /// Publishes `status` with the handled requests added.
    private func publish(_ status: ContainerSyncStatus) {
        var status = status
        if let text = serverTexts.withLock({ $0[status.identifier] }) { status.server = text }
        status.handledRequests = handled.withLock { $0 }
        // The engine's answers (downloads that failed later) and the agent's own.
        var refusals = status.refusedRequests ?? [:]
        refusals.merge(refused.withLock { $0 }) { _, agent in agent }
        status.refusedRequests = refusals.isEmpty ? nil : refusals
        statuses.withLock { $0[status.identifier] = status }
        publisher.publish(status)
    }

    /// Carries out the requests waiting in the inbox, then republishes every status.
    ///
    /// A container whose engine is not made yet (the agent is still connecting: the server is
    /// offline or being probed) keeps its download requests for the engine, which takes them
    /// when it starts; when the container is offline or refused, they are answered at once with
    /// that reason (a reader waiting for the file fails fast). Other item requests for it are
    /// refused: the agent cannot check anything before it is connected.
    private func takeRequests() async {
        let requests = RequestInbox(folder: folder).take()
        guard !requests.isEmpty else { return }
        for request in requests {
            for identifier in identifiers where request.container == nil || request.container == identifier {
                let engine = engines.withLock { table -> SyncEngine? in
                    if let engine = table.engines[identifier] { return engine }
                    if request.command == .download, let path = request.path {
                        var early = table.early[identifier, default: []]
                        early.append(EarlyDownload(path: path, id: request.id))
                        // Bounded: requests piling up while the server stays offline for long.
                        if early.count > EngineTable.maximumEarly { early.removeFirst(early.count - EngineTable.maximumEarly) }
                        table.early[identifier] = early
                    }
                    return nil
                }
                guard let engine else {
                    if let reason = notConnectedReason(identifier, request) { refused.withLock { $0[request.id] = reason } }
                    continue
                }
                if let reason = await carryOut(request, on: engine) { refused.withLock { $0[request.id] = reason } }
            }
            let dropped = handled.withLock { list -> [String] in
                list.append(request.id)
                guard list.count > 32 else { return [] }
                defer { list.removeFirst(list.count - 32) }
                return Array(list.prefix(list.count - 32))
            }
            refused.withLock { for id in dropped { $0[id] = nil } }
        }
        for status in statuses.withLock({ Array($0.values) }) { publish(status) }
    }

    /// Carries out `request` on `engine`; returns why it was refused, or `nil`.
    private func carryOut(_ request: AgentRequest, on engine: SyncEngine) async -> String? {
        switch request.command {
        case .pause: await engine.pause()
        case .resume: await engine.resume()
        case .syncNow: await engine.syncNow()
        case .approveDeletions: await engine.approveHeldDeletions(setIDs: request.deletionSetIDs)
        case .evict, .download, .pin, .unpin:
            guard let path = request.path else { return "the request names no item" }
            switch request.command {
            case .evict: return await engine.evict(path)
            case .download: return await engine.requestDownload(path, requestID: request.id)
            case .pin: return await engine.pin(path)
            default: return await engine.unpin(path)
            }
        }
        return nil
    }

    /// Answers the download requests kept for the container `identifier` (its engine is not
    /// made yet) with `reason`, once each; they stay kept for the engine.
    private func answerEarlyDownloads(_ identifier: String, reason: String) {
        let ids = engines.withLock { $0.early[identifier]?.map(\.id) ?? [] }
        guard !ids.isEmpty else { return }
        refused.withLock { refused in
            for id in ids where refused[id] == nil { refused[id] = reason }
        }
    }

    /// Why `request` cannot be answered yet for the container `identifier`, whose engine is not
    /// made (the agent is connecting), or `nil` when it simply waits (a download while the
    /// server is being probed; the control commands, which apply once the engine runs).
    private func notConnectedReason(_ identifier: String, _ request: AgentRequest) -> String? {
        let state = statuses.withLock { $0[identifier]?.state }
        let why: String? = switch state {
        case .offline(let reason, _): SyncEngine.offlineReason(reason)
        case .refused(let reason): "the agent refuses this container: \(reason)"
        default: nil
        }
        switch request.command {
        case .download: return why
        case .evict, .pin, .unpin:
            return why ?? "the agent is still connecting to the server: try again in a moment"
        default: return nil
        }
    }
}

/// The agent's engines and the download requests that came before their engine (``Agent``).
struct EngineTable: Sendable {
    var engines: [String: SyncEngine] = [:]
    /// Per container, oldest first, at most ``maximumEarly`` (the oldest are dropped).
    var early: [String: [EarlyDownload]] = [:]
    static let maximumEarly = 1000
}

/// A download request taken before its container's engine was made.
struct EarlyDownload: Sendable {
    var path: String
    var id: String
}
