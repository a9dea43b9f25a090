import FileCoordination
import Foundation
import Glibc
import Synchronization
import SystemSupport

/// Writes each container's ``ContainerSyncStatus`` to `ROOT/.clouddocsd/status/IDENTIFIER.json`
/// for apps' providers and `clouddocs agent status`: encoded, written to a temporary file and
/// renamed into place, so a reader sees the old status or the new one, never half of one.
/// No `fsync`: the status describes the running agent and means nothing after a crash.
///
/// Bounded: the queued list is cut at 1,000 entries (``ContainerSyncStatus/queuedCount`` keeps the
/// total) and the errors at 20. Publishing is rate-limited by the caller (the engine publishes on
/// changes); any thread — the mutex makes writes of one container's status happen one at a time.
final class StatusPublisher: Sendable {
    private let folder: AgentFolder
    /// The last bytes written per container (unchanged status → no write).
    private let lastWritten = Locked<[String: Data]>([:])

    init(folder: AgentFolder) {
        self.folder = folder
    }

    static let maximumQueued = 1000
    static let maximumErrors = 20

    /// Publishes `status`; a write that fails is dropped (the next publication retries).
    func publish(_ status: ContainerSyncStatus) {
        var bounded = status
        bounded.queuedCount = max(status.queuedCount, status.queued.count)
        if bounded.queued.count > Self.maximumQueued { bounded.queued = Array(bounded.queued.prefix(Self.maximumQueued)) }
        if bounded.lastErrors.count > Self.maximumErrors { bounded.lastErrors = Array(bounded.lastErrors.suffix(Self.maximumErrors)) }
        bounded.agentProcess = getpid()
        guard let data = try? JSONEncoder.agent.encode(bounded) else { return }
        lastWritten.withLock { written in
            guard written[status.identifier] != data else { return }
            let target = folder.statusFile(for: status.identifier)
            let temporary = folder.statusFolder.appending(path: ".\(status.identifier).\(getpid()).tmp")
            // POSIX calls rather than `Data.write(to:)`, which syncs the file to disk: an idle
            // agent publishes at every pass, and the status need not survive a crash.
            guard Self.writeWhole(data, to: temporary.path) else { unlink(temporary.path); return }
            guard rename(temporary.path, target.path) == 0 else { unlink(temporary.path); return }
            written[status.identifier] = data
        }
    }

    /// Creates or truncates the file at `path` (mode 0644) and writes all of `data`; whether it
    /// all went out.
    private static func writeWhole(_ data: Data, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            (try? FileDescriptor(rawValue: descriptor, path: path).writeAll(bytes)) != nil
        }
    }
}
