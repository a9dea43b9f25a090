import FileCoordination
import Foundation
import Glibc
import Synchronization

/// Download on access: once enabled in a process, a coordinated read (or a write that needs the
/// bytes) of an evicted item in a container the sync agent serves waits for the agent to download
/// it, then runs on the real file — `CloudDocument.open()`, `Coordinator` and `NSFileCoordinator`
/// reads alike. Enabled for you when the process looks a container up (``UbiquityAccount/container(identifier:)``)
/// or creates an `NSFileCoordinator`; programs that take paths call ``enable(for:)`` at start.
///
/// What a waiting access sees (see Docs/FilesOnDemand.md):
/// - the download completes → the access runs on the downloaded file;
/// - the agent is not running, sync is paused, the server is unreachable, or the agent refuses →
///   ``CoordinationError/itemNotDownloaded(_:reason:)`` with that reason, at once (the download
///   request stays queued: the item arrives once the reason is gone);
/// - the coordinator's timeout passes or it is cancelled → `.timedOut` / `.cancelled`.
///
/// The sync agent's own process never enables it (``disableInThisProcess()``): its writes land
/// downloads and must not wait for one.
public enum FilesOnDemand {
    private struct State {
        var disabled = false
        var roots: Set<String> = []
    }
    private static let state = Locked(State())

    /// Enables download on access for the containers of `account` when its provider is the sync
    /// agent (otherwise does nothing: no other provider evicts). Idempotent and cheap after the
    /// first call for a root; any thread.
    public static func enable(for account: UbiquityAccount = .shared) {
        guard let configuration = try? account.configuration(), configuration.provider == .agent,
              let root = configuration.root else { return }
        enable(root: root)
    }

    /// ``enable(for:)`` for ``UbiquityAccount/shared``, once per process (later calls cost one
    /// check): for entry points called often, such as `NSFileCoordinator`'s initializer.
    public static func enableForSharedAccount() { _ = sharedAccountEnabled }
    private static let sharedAccountEnabled: Void = enable(for: .shared)

    /// Enables download on access for the containers under `root` (the account's root folder,
    /// where the agent keeps `ROOT/.clouddocsd/`). Any thread.
    public static func enable(root: URL) {
        let path = canonicalPath(of: root)
        state.withLock { state in
            // Registered under the lock: a `disableInThisProcess()` running at the same time
            // comes wholly before (nothing registered) or wholly after (everything removed).
            guard !state.disabled, state.roots.insert(path).inserted else { return }
            EvictedItemResolution.register(AgentDownloadResolver(rootPath: path))
        }
    }

    /// Turns download on access off for good in this process (the sync agent calls it at start).
    public static func disableInThisProcess() {
        state.withLock { state in
            state.disabled = true
            state.roots.removeAll()
            EvictedItemResolution.unregisterAll()
        }
    }

    /// `url`'s path with symbolic links resolved, as the coordinator's canonical paths are.
    static func canonicalPath(of url: URL) -> String {
        let path = url.standardizedFileURL.path
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// The resolver ``FilesOnDemand`` registers for one root folder: asks the agent serving it to
/// download evicted items and waits for them (see ``FilesOnDemand`` for the outcomes).
struct AgentDownloadResolver: EvictedItemResolver {
    /// The root folder's canonical path.
    let rootPath: String
    /// Its bytes followed by `/`, compared with every coordinated path (bytes, not characters: two
    /// spellings of a name that Unicode calls equal are two folders on Linux).
    private let rootPrefix: [UInt8]

    init(rootPath: String) {
        self.rootPath = rootPath
        rootPrefix = Array(rootPath.utf8) + [UInt8(ascii: "/")]
    }

    /// The first look at the file is after this pause; each next one waits a little longer, up to
    /// ``longestPause``: a small file arrives within milliseconds, and a large one is seen within
    /// 5 ms of its arrival (one `lstat` per look: 200 a second at most, a negligible cost).
    static let firstPause: Duration = .milliseconds(2)
    static let longestPause: Duration = .milliseconds(5)
    /// The agent's status file is read at most this often (it can be large).
    static let statusInterval: Duration = .milliseconds(100)

    func covers(_ path: String) -> Bool {
        let bytes = path.utf8
        return bytes.count > rootPrefix.count && bytes.starts(with: rootPrefix)
    }

    func needsDownload(_ url: URL) -> Bool {
        guard let (containerPath, relative) = split(url) else { return false }
        if Self.isHere(url) { return !Self.evictedItems(inside: relative, in: containerPath).isEmpty }
        return Self.evictedItem(containing: relative, in: containerPath) != nil
    }

    func bringBack(_ requested: URL, wait: EvictedItemWait) throws(CoordinationError) {
        guard let (containerPath, relative) = split(requested) else { return }
        let container = String(containerPath.dropFirst(rootPath.count + 1))
        // The evicted items: the one asked for, or the package (or folder) holding it, or — for a
        // folder being moved or snapshotted — every evicted item inside it.
        let paths: [String]
        if Self.isHere(requested) {
            paths = Self.evictedItems(inside: relative, in: containerPath)
        } else {
            paths = Self.evictedItem(containing: relative, in: containerPath).map { [$0] } ?? []
        }
        guard let first = paths.first else { return }
        let folder = AgentFolder(root: URL(fileURLWithPath: rootPath, isDirectory: true))
        let status = folder.status(of: container)
        // The agent's own writes land downloads: they never wait for one.
        if status?.agentProcess == getpid() { return }
        let firstURL = URL(fileURLWithPath: containerPath + "/" + first)
        guard folder.isAgentRunning else {
            throw .itemNotDownloaded(firstURL, reason: "the sync agent (clouddocsd) is not running (start it: systemctl --user start clouddocsd)")
        }
        guard status != nil else {
            throw .itemNotDownloaded(firstURL, reason: "the sync agent serves no container \(container) (is it in ubiquity.conf?)")
        }
        for path in paths {
            let url = URL(fileURLWithPath: containerPath + "/" + path)
            if Self.isHere(url) { continue }
            try bringBack(path, at: url, container: container, folder: folder, wait: wait)
        }
    }

    /// Sends one download request for the container-relative `path` and waits for it.
    private func bringBack(_ path: String, at url: URL, container: String, folder: AgentFolder,
                           wait: EvictedItemWait) throws(CoordinationError) {
        let request = AgentRequest(command: .download, container: container, path: path)
        do {
            try folder.send(request)
        } catch {
            throw .itemNotDownloaded(url, reason: error.localizedDescription)
        }
        var progress = DownloadWatch(request: request, path: path)
        var pause = Self.firstPause
        var nextStatus = ContinuousClock.now
        while true {
            if Self.isHere(url) { return }
            do {
                try wait.check()
            } catch .timedOut {
                throw .itemNotDownloaded(url, reason: "the download did not finish within the coordinator's timeout")
            } catch {
                throw error
            }
            if ContinuousClock.now >= nextStatus {
                nextStatus = ContinuousClock.now + Self.statusInterval
                let reason = progress.whyNot(status: folder.status(of: container), agentRunning: folder.isAgentRunning,
                                             placeholderThere: (try? ItemPlaceholder.read(forItemAt: url)) ?? nil != nil)
                if let reason {
                    // The agent may have brought it back just before it answered.
                    if Self.isHere(url) { return }
                    throw .itemNotDownloaded(url, reason: reason)
                }
            }
            wait.pause(upTo: pause)
            pause = min(pause * 2, Self.longestPause)
        }
    }

    /// The container folder and the container-relative path of `url`, when it is inside a
    /// container of this root (not the agent's own folder).
    private func split(_ url: URL) -> (containerPath: String, relative: String)? {
        let path = url.path
        guard covers(path) else { return nil }
        let relative = path.utf8.dropFirst(rootPrefix.count)
        guard let slash = relative.firstIndex(of: UInt8(ascii: "/")),
              let container = String(relative[..<slash]), container != AgentFolder.folderName,
              let inside = String(relative[relative.index(after: slash)...]), !inside.isEmpty else { return nil }
        return (rootPath + "/" + container, inside)
    }

    /// The container-relative path of the evicted item that is `path` or holds it (a package
    /// evicted whole: an item inside it is missing because the package is), or `nil` when nothing
    /// on the way is evicted — the item is simply missing. Looks at the missing part only: the
    /// first missing component is the candidate. A placeholder that cannot be read counts as
    /// evicted (fail closed: a write must not create a file over an item it cannot rule out).
    static func evictedItem(containing path: String, in containerPath: String) -> String? {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += prefix.isEmpty ? String(component) : "/" + component
            let candidate = URL(fileURLWithPath: containerPath + "/" + prefix)
            if isHere(candidate) { continue }
            guard let placeholder = ItemPlaceholder.placeholderURL(forItemAt: candidate), isHere(placeholder) else { return nil }
            return prefix
        }
        return nil
    }

    /// The container-relative paths of the evicted items inside the folder `path` (walked whole;
    /// only for a folder being moved or snapshotted), sorted.
    static func evictedItems(inside path: String, in containerPath: String) -> [String] {
        let top = containerPath + "/" + path
        guard let walker = FileManager.default.enumerator(atPath: top) else { return [] }
        var found: [String] = []
        while let entry = walker.nextObject() as? String {
            let name = (entry as NSString).lastPathComponent
            guard let item = ItemPlaceholder.itemName(forPlaceholderNamed: name) else { continue }
            let itemPath = (entry as NSString).deletingLastPathComponent
            let relative = path + "/" + (itemPath.isEmpty ? item : itemPath + "/" + item)
            if !isHere(URL(fileURLWithPath: containerPath + "/" + relative)) { found.append(relative) }
        }
        return found.sorted()
    }

    /// Whether the item itself (not only its placeholder) is there.
    static func isHere(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }
}

/// What a waiting reader learns from the agent's status about its download request, and when it
/// must stop waiting: the agent stopped, refused the request, is paused, offline or refuses the
/// container; the placeholder went without a file (deleted on the server); or the agent, having
/// taken the request, finished a whole pass since without queueing or transferring the item.
struct DownloadWatch {
    let request: AgentRequest
    let path: String
    /// When the agent was first seen to have taken the request.
    private var takenAt: Date?

    init(request: AgentRequest, path: String) {
        self.request = request
        self.path = path
    }

    mutating func whyNot(status: ContainerSyncStatus?, agentRunning: Bool, placeholderThere: Bool) -> String? {
        guard agentRunning else { return "the sync agent (clouddocsd) stopped before the download completed" }
        guard let status else { return "the sync agent no longer publishes a status for this container" }
        if let reason = status.refusedRequests?[request.id] { return reason }
        switch status.state {
        case .paused: return "sync is paused (resume it: clouddocs agent resume)"
        case .offline(let reason, _): return "offline: the server cannot be reached (\(reason))"
        case .refused(let reason): return "the sync agent refuses to sync this container: \(reason)"
        case .idle, .syncing: break
        }
        if !placeholderThere { return "it is no longer in the cloud (deleted on the server, or moved)" }
        if status.handledRequests.contains(request.id) {
            guard let takenAt else {
                takenAt = Date()
                return nil
            }
            let moving = status.queued.contains { $0.path == path } || status.transfers.contains { $0.path == path }
            if case .idle = status.state, !moving, let scanned = status.scannedThrough, scanned > takenAt {
                return "the sync agent finished a pass without downloading it (see clouddocs agent status)"
            }
        }
        return nil
    }
}
