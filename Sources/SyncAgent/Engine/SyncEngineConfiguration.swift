import FileCoordination
import Foundation

/// How one container is synced.
public struct SyncEngineConfiguration: Sendable {
    /// The container's identifier (`com.example.notes`).
    public var identifier: String
    /// The container folder, `ROOT/IDENTIFIER/`.
    public var containerURL: URL
    /// The agent's private folder, `ROOT/.clouddocsd/` (journal, transfers), outside every
    /// container and on the same file system (downloads are renamed into place).
    public var agentFolder: AgentFolder
    /// The guards' thresholds.
    public var guards: SyncGuards
    /// How long ``SyncEngine/run()`` waits between passes when nothing happens.
    public var pollInterval: Duration
    /// The first back-off after a transient server error (doubled per failure, with jitter).
    public var initialBackoff: Duration
    /// The longest back-off.
    public var maximumBackoff: Duration
    /// The longest wait for a coordinated access of a local item (a presenter that does not
    /// answer): the step fails and is retried by a later pass.
    public var coordinationTimeout: Duration
    /// The extensions of package documents (`pages`, `album`; without the dot, any case): a
    /// folder with one of them syncs as one unit. By default the ones this process registered
    /// with `Coordinator.registerPackageExtension(_:)` when the configuration was made.
    public var packageExtensions: Set<String>
    /// The most bytes of downloaded files and packages the container may hold (`nil`: no
    /// budget). After a pass, while it holds more, the least recently used unpinned, uploaded,
    /// closed items are evicted (``SyncEngine/enforceSpaceBudget()``).
    public var spaceBudget: Int64?
    /// The space budget never evicts an item used (read or written) less than this long ago:
    /// it may be open (default 5 minutes).
    public var spaceBudgetGrace: Duration = .seconds(300)

    /// A configuration for the container `identifier` in the containers' root `root`.
    public init(identifier: String, root: URL, guards: SyncGuards = SyncGuards(), pollInterval: Duration = .seconds(30),
                initialBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(300),
                coordinationTimeout: Duration = .seconds(30), packageExtensions: Set<String>? = nil) {
        self.packageExtensions = packageExtensions ?? Coordinator.packageExtensions
        self.identifier = identifier
        containerURL = root.appending(path: identifier, directoryHint: .isDirectory)
        agentFolder = AgentFolder(root: root)
        self.guards = guards
        self.pollInterval = pollInterval
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.coordinationTimeout = coordinationTimeout
    }

    /// Where this container's journal is.
    public var journalFolder: URL { agentFolder.journalFolder(for: identifier) }

    /// Where this container's downloads and upload snapshots are written
    /// (`ROOT/.clouddocsd/transfers/IDENTIFIER/`), emptied when an engine starts.
    public var transfersFolder: URL {
        agentFolder.transfersFolder.appending(path: identifier, directoryHint: .isDirectory)
    }
}

/// Why a step of a pass failed (kept in ``ContainerSyncStatus/lastErrors``).
public enum SyncStepError: Error, Sendable, CustomStringConvertible {
    /// The server refused or failed.
    case remote(RemoteStoreError)
    /// A local file operation failed.
    case local(path: String, reason: String)
    /// The journal could not be written.
    case journal(JournalError)
    /// Not done in this pass, on purpose (safe mode waits for a strong tag or for the item's
    /// last write to be old enough): the next pass plans it again. Not shown as an error.
    case deferred(path: String, reason: String)

    public var description: String {
        switch self {
        case .remote(let error): error.description
        case .local(let path, let reason): "\(path): \(reason)"
        case .journal(let error): error.description
        case .deferred(let path, let reason): "\(path): deferred: \(reason)"
        }
    }

    /// Whether the server is unreachable or failing (the pass stops; changes stay queued).
    var isTransient: Bool { if case .remote(let error) = self { error.isTransient } else { false } }
}
