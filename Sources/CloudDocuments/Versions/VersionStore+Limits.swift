import Foundation
import Glibc
import SystemSupport

/// The bounding policy (Docs/Versions.md, "The version store"), applied after each added version:
///
/// 1. Per item: at most ``VersionStore/Limits/maximumVersionsPerItem`` droppable versions
///    (non-conflict, or resolved conflict). Beyond it, the item's versions are dropped in this
///    order until it fits: discardable ones first, then the oldest.
/// 2. Store-wide: at most ``VersionStore/Limits/maximumTotalBytes`` of contents. Beyond it,
///    droppable versions of any item are dropped in the same order (discardable, then oldest).
///
/// Never dropped: unresolved conflict versions, and the version just added (so one version
/// larger than the whole budget is still kept, alone). The store-wide pass holds `store.lock`
/// (`flock`), so two processes never prune at once; versions of other items are dropped by the
/// same atomic rename as ``VersionStore/removeVersion(_:of:)`` (a reader sees each version whole
/// or not at all), without a coordinated write of those items.
extension VersionStore {
    func applyLimits(afterAdding added: VersionRecord, to itemID: String) {
        let itemVersions = versions(of: itemID)
        let droppable = itemVersions.filter(\.isDroppable)
        if droppable.count > limits.maximumVersionsPerItem {
            let excess = droppable.count - limits.maximumVersionsPerItem
            for record in Self.dropOrder(droppable.filter { $0.id != added.id }).prefix(excess) {
                try? removeVersion(record.id, of: itemID)
            }
        }
        applyStoreByteLimit(keeping: added.id)
    }

    /// Discardable versions first, then oldest first.
    static func dropOrder(_ records: [VersionRecord]) -> [VersionRecord] {
        records.sorted { a, b in
            if a.isDiscardable != b.isDiscardable { return a.isDiscardable }
            return (a.addedDate, a.id) < (b.addedDate, b.id)
        }
    }

    private func applyStoreByteLimit(keeping keptID: String) {
        let lockPath = root + "/store.lock"
        guard case .success(let fd) = PathBytes.withCString(lockPath, { cPath in
            valueOrErrno { open(cPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        }) else { return }
        defer { _ = close(fd) }
        guard case .success = valueOrErrno({ flock(fd, LOCK_EX) }) else { return }
        guard let items = try? POSIX.directoryEntries(itemsFolder).names.filter({ UUID(uuidString: $0) != nil })
        else { return }
        var total: Int64 = 0
        var candidates: [(item: String, record: VersionRecord)] = []
        for item in items {
            for record in versions(of: item) {
                total += record.size
                if record.isDroppable, record.id != keptID { candidates.append((item, record)) }
            }
        }
        guard total > limits.maximumTotalBytes else { return }
        let order = Self.dropOrder(candidates.map(\.record))
        let itemOf = Dictionary(candidates.map { ($0.record.id, $0.item) }, uniquingKeysWith: { first, _ in first })
        for record in order where total > limits.maximumTotalBytes {
            guard let item = itemOf[record.id] else { continue }
            if (try? removeVersion(record.id, of: item)) != nil { total -= record.size }
        }
    }
}
