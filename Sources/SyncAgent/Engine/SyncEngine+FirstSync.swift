import Foundation
import Glibc
import SystemSupport

extension SyncEngine {
    /// A device that never synced this container (its journal knows no item and no server) may
    /// not have the container folder yet — a new device, as a user sets one up. The folder is
    /// made then, inside an existing root, so the first pass downloads into it rather than
    /// refusing a "missing folder". A container that synced before and is now missing stays
    /// refused (an unmounted disk), and a missing root is never made. Returns whether it made the
    /// folder. Called once, when the engine starts; any thread.
    @discardableResult
    static func makeContainerFolderForFirstSync(_ configuration: SyncEngineConfiguration, journalIsEmpty: Bool) -> Bool {
        guard journalIsEmpty else { return false }
        let container = SystemPath(fileURL: configuration.containerURL)
        let root = SystemPath(fileURL: configuration.containerURL.deletingLastPathComponent())
        guard let rootInfo = try? POSIX.linkStatus(root), (rootInfo.st_mode & S_IFMT) == S_IFDIR,
              (try? POSIX.linkStatus(container)) ?? nil == nil else { return false }
        do {
            try POSIX.makeDirectory(container, mode: 0o755)
            try? POSIX.syncDirectory(root)
            return true
        } catch {
            return false
        }
    }
}
