/// One local item as the scan found it.
public struct LocalItem: Sendable, Hashable {
    /// The container-relative path, `/`-separated.
    public var path: String
    public var isFolder: Bool
    public var fingerprint: LocalFingerprint

    public init(path: String, isFolder: Bool, fingerprint: LocalFingerprint) {
        self.path = path
        self.isFolder = isFolder
        self.fingerprint = fingerprint
    }
}

/// What to do with one item, decided by ``SyncPlanner``.
public enum SyncStep: Sendable, Hashable {
    /// Local file → server (the local side changed, the server's did not).
    case upload(String)
    /// Server file → here (the server changed, the local side did not).
    case download(String)
    /// Both sides changed, or the item is new on both: compare the bytes; identical → record;
    /// different → the server's version becomes current, the local one a conflict version.
    case conflict(String)
    case makeRemoteFolder(String)
    case makeLocalFolder(String)
    /// A folder present on both sides that the journal does not know yet.
    case recordFolder(String)
    /// The server deleted it and it is unchanged here.
    case deleteLocal(String)
    /// Deleted here and unchanged on the server.
    case deleteRemote(String)
    /// Gone from both sides: forget it.
    case forget(String)
    /// A file on one side and a folder on the other: left alone and reported.
    case kindClash(String)
    /// Renamed here (same inode, same bytes), unchanged on the server: a conditional `MOVE`.
    case moveRemote(from: String, to: String)
    /// Renamed on the server (same file id, same tag), unchanged here: a coordinated move.
    case moveLocal(from: String, to: String)

    /// The container-relative path.
    public var path: String {
        switch self {
        case .upload(let path), .download(let path), .conflict(let path), .makeRemoteFolder(let path),
             .makeLocalFolder(let path), .recordFolder(let path), .deleteLocal(let path),
             .deleteRemote(let path), .forget(let path), .kindClash(let path): path
        case .moveRemote(_, let destination), .moveLocal(_, let destination): destination
        }
    }

    /// The status's name for it (`nil` for bookkeeping that is not shown as queued).
    public var action: SyncAction? {
        switch self {
        case .upload, .makeRemoteFolder: .upload
        case .download, .makeLocalFolder: .download
        case .conflict: .conflict
        case .deleteLocal: .deleteLocal
        case .deleteRemote: .deleteRemote
        case .moveRemote: .moveRemote
        case .moveLocal: .moveLocal
        case .recordFolder, .forget, .kindClash: nil
        }
    }

    /// The order steps run in: folders made first (parents before children), then transfers,
    /// then deletions (children before parents), then bookkeeping.
    var phase: Int {
        switch self {
        case .makeRemoteFolder, .makeLocalFolder, .recordFolder: 0
        case .upload, .download, .conflict, .moveRemote, .moveLocal: 1
        case .deleteLocal, .deleteRemote: 2
        case .forget, .kindClash: 3
        }
    }
}

/// What one pass will do.
public struct SyncPlan: Sendable, Equatable {
    /// The steps in the order they run.
    public var steps: [SyncStep] = []
    /// Local deletions the server asked for but the guard holds (container-relative paths).
    public var heldDeletions: [String] = []
    /// Server deletions of items deleted here that the guard holds (container-relative paths).
    public var heldLocalDeletions: [String] = []
    /// Why the pass refuses to run (``ContainerSyncState/refused(reason:)``), when it does.
    public var refusal: String?
    /// Whether the server looked replaced or rolled back (then nothing was planned to be
    /// deleted, and differing items are conflicts).
    public var serverReplaced = false

    public init(steps: [SyncStep] = [], heldDeletions: [String] = [], refusal: String? = nil, serverReplaced: Bool = false) {
        self.steps = steps
        self.heldDeletions = heldDeletions
        self.refusal = refusal
        self.serverReplaced = serverReplaced
    }
}
