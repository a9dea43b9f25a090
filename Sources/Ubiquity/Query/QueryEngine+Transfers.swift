import Foundation
import Glibc
import SystemSupport

/// Live transfer states: for containers the sync agent serves, the query watches the agent's
/// status folder (`ROOT/.clouddocsd/status/`, where each status file is replaced atomically) and,
/// each time a container's status is replaced, gives the items whose transfer state changed their
/// new state — a download's or upload's percent as it progresses, then done — as *changes* of
/// the same results. Only the items the status mentions (queued or transferring, at most a few
/// hundred) and those it mentioned last time are looked at.
extension QueryEngine {
    /// What the status folders are watched for: a status replaced (renamed into place) or written.
    static let statusEvents = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)

    /// Watches the status folders and reads every status once (at the end of gathering).
    func startWatchingTransfers() {
        loop.assertInLoop()
        for (index, source) in settings.agentStatus.enumerated() {
            // The agent makes its status folder at its first start; made here if no agent ran
            // yet, so that the query hears of it from the first status on.
            try? FileManager.default.createDirectory(at: source.folder.statusFolder, withIntermediateDirectories: true)
            if case .success(let descriptor) = loop.addWatch(source.folder.statusFolder.path, mask: Self.statusEvents) {
                statusWatches[descriptor, default: []].append(index)
            }
            refreshTransfers(of: index)
        }
    }

    /// Handles `report` if it concerns a status folder; returns whether it did.
    func applyStatusReport(_ report: InotifyEvent) -> Bool {
        guard let indexes = statusWatches[report.descriptor] else { return false }
        if report.mask & UInt32(IN_IGNORED) != 0 { statusWatches.removeValue(forKey: report.descriptor); return true }
        for index in indexes where report.name == settings.agentStatus[index].identifier + ".json" {
            refreshTransfers(of: index)
        }
        return true
    }

    /// Reads the status of source `index` and refreshes the items whose state changed.
    func refreshTransfers(of index: Int) {
        let source = settings.agentStatus[index]
        // A status left by an agent that is gone says nothing about transfers now.
        let status = source.folder.isAgentRunning ? source.folder.status(of: source.identifier) : nil
        let fresh = status.map { ItemTransferState.states(from: $0, containerPath: source.containerPath) } ?? [:]
        let previous = transferStates[index] ?? [:]
        guard fresh != previous else { return }
        transferStates[index] = fresh
        var touched = Set(fresh.keys)
        for (path, state) in previous where fresh[path] != state { touched.insert(path) }
        for path in touched where fresh[path] != previous[path] {
            // Hidden items (and items in hidden folders) are never results.
            guard !path.contains("/."), let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")),
                  let root = root(containing: path) else { continue }
            let folder = String(path[..<slash]), name = String(path[path.index(after: slash)...])
            refresh(folder: folder, name: name, root: root, previous: nil)
        }
        notePending()
    }

    /// Reads every agent status again (after the kernel's queue overflowed: a replacement may
    /// have been lost).
    func refreshAllTransfers() {
        for index in settings.agentStatus.indices { refreshTransfers(of: index) }
    }

    /// The transfer state of the item at `path` (none when no agent status mentions it).
    func transferState(of path: String) -> ItemTransferState {
        guard !transferStates.isEmpty else { return .none }
        for states in transferStates.values { if let state = states[path] { return state } }
        return .none
    }
}
