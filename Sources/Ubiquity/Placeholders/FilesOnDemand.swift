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
    private static let state = Mutex(State())

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
        let isNew = state.withLock { state -> Bool in
            guard !state.disabled else { return false }
            return state.roots.insert(path).inserted
        }
        if isNew { EvictedItemResolution.register(AgentDownloadResolver(rootPath: path)) }
    }

    /// Turns download on access off for good in this process (the sync agent calls it at start).
    public static func disableInThisProcess() {
        state.withLock { state in
            state.disabled = true
            state.roots.removeAll()
        }
        EvictedItemResolution.unregisterAll()
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
/// download an evicted item and waits for the file (see ``FilesOnDemand`` for the outcomes).
struct AgentDownloadResolver: EvictedItemResolver {
    /// The root folder's canonical path.
    let rootPath: String

    /// The first look at the file is after this pause; each next one waits a little longer, up to
    /// ``longestPause``: a small file arrives within milliseconds, a large one is not polled hard.
    static let firstPause: Duration = .milliseconds(2)
    static let longestPause: Duration = .milliseconds(20)
    /// The agent's status file is read at most this often (it can be large).
    static let statusInterval: Duration = .milliseconds(100)

    func covers(_ path: String) -> Bool {
        path.count > rootPath.count + 1 && path.hasPrefix(rootPath) && path.utf8.dropFirst(rootPath.utf8.count).first == UInt8(ascii: "/")
    }

    func bringBack(_ requested: URL, wait: EvictedItemWait) throws(CoordinationError) {
        let relative = String(requested.path.dropFirst(rootPath.count + 1))
        guard let slash = relative.firstIndex(of: "/") else { return }
        let container = String(relative[..<slash])
        guard container != AgentFolder.folderName,
              let path = Self.evictedItem(containing: String(relative[relative.index(after: slash)...]),
                                          in: rootPath + "/" + container) else { return }
        // The evicted item: the one asked for, or the package (or folder) holding it.
        let url = URL(fileURLWithPath: rootPath + "/" + container + "/" + path)
        let folder = AgentFolder(root: URL(fileURLWithPath: rootPath, isDirectory: true))
        // The agent's own writes land downloads: they never wait for one.
        if folder.status(of: container)?.agentProcess == getpid() { return }
        guard folder.isAgentRunning else {
            throw .itemNotDownloaded(url, reason: "the sync agent (clouddocsd) is not running (start it: systemctl --user start clouddocsd)")
        }
        let request = AgentRequest(command: .download, container: container, path: path)
        do {
            try folder.send(request)
        } catch {
            throw .itemNotDownloaded(url, reason: error.localizedDescription)
        }
        var pause = Self.firstPause
        var nextStatus = ContinuousClock.now
        while true {
            if Self.isHere(url) { return }
            try wait.check()
            if ContinuousClock.now >= nextStatus {
                nextStatus = ContinuousClock.now + Self.statusInterval
                if let reason = Self.whyNot(request: request, container: container, folder: folder) {
                    // The agent may have brought it back just before it answered.
                    if Self.isHere(url) { return }
                    throw .itemNotDownloaded(url, reason: reason)
                }
            }
            wait.pause(upTo: pause)
            pause = min(pause * 2, Self.longestPause)
        }
    }

    /// The container-relative path of the evicted item that is `path` or holds it (a package
    /// evicted whole: an item inside it is missing because the package is), or `nil` when nothing
    /// on the way is evicted — the item is simply missing. Looks at the missing part only: the
    /// first missing component is the candidate.
    static func evictedItem(containing path: String, in containerPath: String) -> String? {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += prefix.isEmpty ? String(component) : "/" + component
            let candidate = URL(fileURLWithPath: containerPath + "/" + prefix)
            if isHere(candidate) { continue }
            return (try? ItemPlaceholder.read(forItemAt: candidate)) ?? nil != nil ? prefix : nil
        }
        return nil
    }

    /// Whether the item itself (not only its placeholder) is there.
    static func isHere(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// Why the download will not come now, from the agent's status: it stopped, refused this
    /// request, is paused, offline or refuses the container; `nil` while it may still come.
    static func whyNot(request: AgentRequest, container: String, folder: AgentFolder) -> String? {
        guard folder.isAgentRunning else { return "the sync agent (clouddocsd) stopped before the download completed" }
        guard let status = folder.status(of: container) else { return nil }
        if let reason = status.refusedRequests?[request.id] { return reason }
        switch status.state {
        case .paused: return "sync is paused (resume it: clouddocs agent resume)"
        case .offline(let reason, _): return "offline: the server cannot be reached (\(reason))"
        case .refused(let reason): return "the sync agent refuses to sync this container: \(reason)"
        case .idle, .syncing: return nil
        }
    }
}
