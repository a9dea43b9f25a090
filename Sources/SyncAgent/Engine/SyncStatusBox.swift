import FileCoordination
import Foundation
import Synchronization

/// The engine's current ``ContainerSyncStatus``, shared with transfers' progress callbacks (which
/// run on the store's threads). Every change is handed to the engine's status callback — progress
/// at most once per whole percent (or per 1 MiB when the total is unknown).
/// Sendable: the status lives in a `Locked` (a pthread mutex ThreadSanitizer sees); the callback is called outside it.
final class SyncStatusBox: Sendable {
    private let status: Locked<ContainerSyncStatus>
    private let publish: @Sendable (ContainerSyncStatus) -> Void

    init(_ initial: ContainerSyncStatus, publish: @escaping @Sendable (ContainerSyncStatus) -> Void) {
        status = Locked(initial)
        self.publish = publish
    }

    var current: ContainerSyncStatus { status.withLock { $0 } }

    /// Changes the status and publishes it.
    func update(_ change: (inout ContainerSyncStatus) -> Void) {
        let snapshot = status.withLock { status in
            change(&status)
            return status
        }
        publish(snapshot)
    }

    /// Records `error` (newest last, at most 20).
    func record(_ message: String, path: String?) {
        update { status in
            status.lastErrors.append(AgentErrorRecord(date: Date(), path: path, message: message))
            if status.lastErrors.count > 20 { status.lastErrors.removeFirst(status.lastErrors.count - 20) }
        }
    }

    /// A transfer's progress: adds or updates its entry; publishes when it moved enough.
    func progress(path: String, isUpload: Bool, done: Int64, total: Int64?) {
        let snapshot: ContainerSyncStatus? = status.withLock { status in
            let entry = ItemTransfer(path: path, isUpload: isUpload, bytesDone: done, bytesTotal: total)
            guard let index = status.transfers.firstIndex(where: { $0.path == path }) else {
                status.transfers.append(entry)
                return status
            }
            let old = status.transfers[index]
            status.transfers[index] = entry
            let moved: Bool = if let percent = entry.percent, let oldPercent = old.percent {
                Int(percent) != Int(oldPercent)
            } else {
                done / (1 << 20) != old.bytesDone / (1 << 20)
            }
            return moved ? status : nil
        }
        if let snapshot { publish(snapshot) }
    }

    /// Removes a finished transfer's entry.
    func finishTransfer(path: String) {
        update { status in status.transfers.removeAll { $0.path == path } }
    }
}
