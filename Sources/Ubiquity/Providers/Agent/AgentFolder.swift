import FileCoordination
import Foundation
import Glibc
import SystemSupport

/// The sync agent's private folder, `ROOT/.clouddocsd/`, beside the containers (`ROOT/IDENTIFIER/`)
/// and outside every one of them, so no query, presenter or sync lists it:
///
/// | path | what |
/// | --- | --- |
/// | `agent.lock` | write-locked (an OFD lock) by the running agent: one agent per root |
/// | `status/IDENTIFIER.json` | the agent's ``ContainerSyncStatus`` of each container, replaced atomically |
/// | `requests/*.request` | commands from `clouddocs agent …` (``AgentRequest``), consumed by the agent |
/// | `journal/IDENTIFIER/` | the agent's crash-safe journal of each container |
/// | `transfers/` | downloads and upload snapshots in progress (same file system as the containers) |
///
/// Apps' processes only read `status/` and test `agent.lock`; nothing here blocks: a missing,
/// unreadable or garbled status file reads as "no agent".
public struct AgentFolder: Sendable, Hashable {
    /// `ROOT/.clouddocsd/`.
    public let url: URL

    /// The agent folder of the containers' root folder `root`.
    public init(root: URL) {
        url = root.appending(path: ".clouddocsd", directoryHint: .isDirectory)
    }

    /// The name of the folder inside the root (skipped by everything that lists the root).
    public static let folderName = ".clouddocsd"

    public var lockFile: URL { url.appending(path: "agent.lock") }
    public var statusFolder: URL { url.appending(path: "status", directoryHint: .isDirectory) }
    public var requestsFolder: URL { url.appending(path: "requests", directoryHint: .isDirectory) }
    public var transfersFolder: URL { url.appending(path: "transfers", directoryHint: .isDirectory) }

    /// The journal folder of the container `identifier`.
    public func journalFolder(for identifier: String) -> URL {
        url.appending(path: "journal/\(identifier)", directoryHint: .isDirectory)
    }

    /// The status file of the container `identifier`.
    public func statusFile(for identifier: String) -> URL {
        statusFolder.appending(path: identifier + ".json")
    }

    /// The largest status file read (a bigger one reads as missing).
    public static let maximumStatusSize = 8 << 20

    /// The last status the agent published for `identifier`, or `nil` when there is none or it
    /// cannot be read (also when it is not a regular file: a FIFO there is never opened for a
    /// blocking read). Never blocks (a bounded read of a small file); any thread.
    public func status(of identifier: String) -> ContainerSyncStatus? {
        let path = statusFile(for: identifier).path
        guard let data = readSmallRegularFile(atPath: path, limit: Self.maximumStatusSize) else { return nil }
        return try? JSONDecoder.agent.decode(ContainerSyncStatus.self, from: data)
    }

    /// Whether an agent is running for this root: whether some process holds the write lock on
    /// `agent.lock`. Tests the lock without taking it. Any thread; never blocks (`agent.lock` is
    /// opened non-blocking and must be a regular file: anything else reads as "no agent").
    public var isAgentRunning: Bool {
        guard let fd = openRegularFileForReading(lockFile.path) else { return false }
        defer { close(fd) }
        return OFDLock.isContended(.shared, fd: fd, start: 0, length: 1)
    }

    /// Leaves `request` for the agent (a file in `requests/`, written then renamed into place so
    /// the agent never reads half of one).
    ///
    /// - Throws: ``UbiquityError/containerUnavailable(identifier:path:reason:)`` when no agent
    ///   folder exists (no agent ever ran for this root) or the file cannot be written.
    public func send(_ request: AgentRequest) throws(UbiquityError) {
        let folder = requestsFolder
        let name = request.id + ".request"
        do {
            let data = try JSONEncoder.agent.encode(request)
            let temporary = folder.appending(path: "." + name + ".tmp")
            try data.write(to: temporary)
            try FileManager.default.moveItem(at: temporary, to: folder.appending(path: name))
        } catch {
            throw .containerUnavailable(identifier: request.container ?? "*", path: folder.path,
                                        reason: "cannot leave a request for the agent: \(error.localizedDescription)")
        }
    }
}

/// A command for the running agent, from `clouddocs agent pause|resume|sync-now|approve-deletions`.
public struct AgentRequest: Codable, Sendable, Hashable {
    /// What to do.
    public enum Command: String, Codable, Sendable, Hashable, CaseIterable {
        case pause, resume
        case syncNow = "sync-now"
        case approveDeletions = "approve-deletions"
        /// Evict ``AgentRequest/path`` (files on demand); the outcome is in ``ContainerSyncStatus/refusedRequests``.
        case evict
        /// Download the evicted ``AgentRequest/path`` (a folder: every evicted item inside it).
        /// Handled at once; when the download cannot be done (offline, deleted on the server, a
        /// failing step), the reason appears later in ``ContainerSyncStatus/refusedRequests``.
        case download
        /// Keep ``AgentRequest/path`` (a file, package or folder) always downloaded: never evicted
        /// by the space budget, downloaded now if evicted.
        case pin
        /// Undo ``pin``.
        case unpin
    }

    /// A unique identifier; the agent lists handled ones in ``ContainerSyncStatus/handledRequests``.
    public var id: String
    public var command: Command
    /// The container concerned, or `nil` for all.
    public var container: String?
    /// For `approve-deletions`: the ``HeldDeletion/setID``s the user was shown. The agent approves
    /// a container's held deletions only when they are still that set (`nil`: whatever is held).
    public var deletionSetIDs: [String]?
    /// For `evict`, `download`, `pin` and `unpin`: the item, relative to the container (`Documents/a.txt`).
    public var path: String?

    public init(command: Command, container: String? = nil, id: String = UUID().uuidString, deletionSetIDs: [String]? = nil,
                path: String? = nil) {
        self.deletionSetIDs = deletionSetIDs
        self.path = path
        self.command = command
        self.container = container
        self.id = id
    }
}

extension JSONEncoder {
    /// The encoder of the agent's files: sorted keys, dates as seconds since 1970 (a `Double`:
    /// ISO 8601 would drop the fractions of a second that ``ContainerSyncStatus/scannedThrough`` is
    /// compared with).
    package static var agent: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

extension JSONDecoder {
    /// The decoder of the agent's files.
    package static var agent: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}
