import CloudDocuments
import Ubiquity

/// Names the agent never syncs, on either side: sync tools' and editors' temporary, internal and
/// lock files (``SyncInternalItems``), the agent's private folder, its server-side areas, and the
/// placeholders evicted items leave (``ItemPlaceholder``; see ``EvictedItems``).
enum SyncExclusions {
    /// The server folder that holds conflict versions' bytes for the other devices.
    static let conflictArea = ".clouddocs-conflicts"

    /// Whether an item named `name` is left out of the sync.
    static func excludes(_ name: String) -> Bool {
        if name == AgentFolder.folderName || name == conflictArea { return true }
        // The agent's own names on the server (its probe folder and markers).
        if name.hasPrefix(".clouddocsd") { return true }
        if ItemPlaceholder.isPlaceholderName(name) { return true }
        return SyncInternalItems.item(named: name) != nil
    }
}
