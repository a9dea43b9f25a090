import Foundation

/// What the sync agent is doing with one item, as a query reports it: nothing, waiting to upload,
/// or transferring with a percent. Two bytes, so a ``MetadataItem`` stays small.
struct ItemTransferState: Sendable, Hashable {
    enum Kind: UInt8, Sendable, Hashable {
        /// Nothing queued or moving: the item's place follows from its flags (evicted or whole).
        case none
        /// Queued for upload (changed here, not uploaded yet).
        case waitingToUpload
        case uploading
        /// Queued for download (a newer version, or an evicted item asked for).
        case waitingToDownload
        case downloading
    }

    var kind: Kind
    /// 0–100 while transferring; 0 otherwise.
    var percent: UInt8

    static let none = ItemTransferState(kind: .none, percent: 0)

    /// The transfer state of every item `status` mentions, by absolute path (`containerPath` +
    /// `/` + the container-relative path). Transfers win over queue entries for the same item.
    static func states(from status: ContainerSyncStatus, containerPath: String) -> [String: ItemTransferState] {
        var states: [String: ItemTransferState] = [:]
        for queued in status.queued {
            switch queued.action {
            case .upload: states[containerPath + "/" + queued.path] = ItemTransferState(kind: .waitingToUpload, percent: 0)
            case .download: states[containerPath + "/" + queued.path] = ItemTransferState(kind: .waitingToDownload, percent: 0)
            default: break
            }
        }
        for transfer in status.transfers {
            // The agent's numbers are not trusted to be sane: any value becomes 0–100.
            let raw = transfer.percent ?? 0
            let percent = raw.isFinite ? UInt8(min(max(raw, 0), 100).rounded(.down)) : 0
            states[containerPath + "/" + transfer.path] = ItemTransferState(kind: transfer.isUpload ? .uploading : .downloading,
                                                                           percent: percent)
        }
        return states
    }
}

/// A container synced by the agent whose items a query lists: where its status is published.
struct AgentStatusSource: Sendable, Hashable {
    let identifier: String
    /// The container folder (a lossless path string, no trailing `/`).
    let containerPath: String
    let folder: AgentFolder

    /// The containers of `account` that the agent syncs and that overlap `roots`.
    static func sources(for roots: [ScopeRoot], account: UbiquityAccount) -> [AgentStatusSource] {
        guard roots.contains(where: \.isUbiquitous), let configuration = try? account.configuration(),
              configuration.provider == .agent, let root = configuration.root else { return [] }
        let folder = AgentFolder(root: root)
        return configuration.containerIdentifiers.compactMap { identifier in
            let containerPath = ScopeRoot.clean(root.appending(path: identifier, directoryHint: .isDirectory))
            let overlaps = roots.contains { scope in
                scope.isUbiquitous && (scope.path == containerPath || CanonicalPathSupport.isInside(scope.path, containerPath)
                                       || CanonicalPathSupport.isInside(containerPath, scope.path))
            }
            return overlaps ? AgentStatusSource(identifier: identifier, containerPath: containerPath, folder: folder) : nil
        }
    }
}
