import Foundation
import Synchronization

/// A runtime's registry of file presenters (`CoordinationRuntime.registry`), indexed by the canonical path of the item each
/// presents, so finding the presenters concerned by an access costs a few dictionary look-ups
/// whatever the number of presenters.
///
/// Presenters are held weakly. A presenter's path is read from `presentedItemURL` when it is
/// added and updated when the coordinator moves it (`item(at:didMoveTo:)`); presenters whose URL
/// is nil are re-read at every look-up until they have one. A presenter whose URL changes any
/// other way must be removed and added again.
///
/// The registry answers "who presents what" (as `PresenterAddress` values: a `PresenterID` and a
/// path); `PresenterMessenger` decides what they are told and sends it through a
/// `PresenterDelivery`, and `ChangeMonitor` watches the registered items for changes made by
/// other processes. `PresenterDirectory` puts its answers beside those of presenters in other
/// processes (`RemotePresence`): the messenger asks the directory, not the registry.
final class PresenterRegistry: Sendable {
    /// Watches the registered items for changes made elsewhere.
    let monitor: ChangeMonitor
    /// The runtime's canonical-path caches.
    let paths: PathCaches

    /// Publishes the indexed paths to other processes (remote presenters hook).
    let presence: RemotePresence?

    init(monitor: ChangeMonitor, paths: PathCaches, presence: RemotePresence? = nil) {
        self.monitor = monitor
        self.paths = paths
        self.presence = presence
    }

    struct Registered: @unchecked Sendable {
        // @unchecked: `presenter` is a weak reference to a Sendable object; only read under the lock.
        weak var presenter: (any FilePresenter)?
        var path: String?
    }

    private struct State {
        var entries: [PresenterID: Registered] = [:]
        var byPath: [String: [PresenterID]] = [:]
        var unplaced: Set<PresenterID> = []
        /// How many presenters are indexed under each path, by the path's stable hash: lets
        /// `concern(at:own:)` test a path and all its ancestors without building any string.
        var pathHashes: [UInt64: Int] = [:]
    }
    private let state = Locked(State())
    private let count = Atomic<Int>(0)

    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }

    /// Asserts, in debug builds, that the caller runs with the registry's lock held: the hooks the
    /// registry calls as it indexes a path (`RemotePresence.published` / `withdrawn`) rely on it.
    func assertLockHeld(_ what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        state.assertHeld("the presenter registry's lock, for " + what(), file: file, line: line)
    }

    /// Who an access to `path` may concern, for the coordinator fast path.
    enum Concern: Equatable {
        /// No live presenter presents `path` or a directory above it, and none is waiting for a URL.
        case nobody
        /// Only `own` (the coordinator's presenter) presents `path`, and nobody presents a
        /// directory above it or is waiting for a URL.
        case onlyOwn
        /// Someone else may be concerned (a hash collision with an ancestor answers this too,
        /// which only costs the full look-up).
        case others
    }

    /// Who an access to `path` may concern, `own` being the coordinating presenter: one lock and
    /// one pass over the path. Presenters *inside* `path` are not
    /// considered: they matter only to deletes, moves and packages, which the caller handles.
    func concern(at path: String, own: PresenterID?) -> Concern {
        guard !isEmpty else { return .nobody }
        return state.withLock { state in
            if !state.unplaced.isEmpty { return .others }
            if state.pathHashes.isEmpty { return .nobody }
            var hash = StableHash.offsetBasis
            var first = true
            for byte in path.utf8 {
                if byte == UInt8(ascii: "/"), !first, state.pathHashes[hash] != nil { return .others }
                hash = StableHash.step(hash, byte)
                if first {
                    first = false
                    if path.utf8.count > 1, state.pathHashes[hash] != nil { return .others }  // "/"
                }
            }
            guard state.pathHashes[hash] != nil, let ids = state.byPath[path] else { return .nobody }
            var ownIsThere = false
            for id in ids where state.entries[id]?.presenter != nil {
                guard id == own else { return .others }
                ownIsThere = true
            }
            return ownIsThere ? .onlyOwn : .nobody
        }
    }

    func add(_ presenter: any FilePresenter) {
        let id = PresenterID(presenter)
        let path = presenter.presentedItemURL.map { CanonicalPath.of($0, in: paths) }
        state.withLock { state in
            if state.entries[id] != nil { Self.unindex(id, in: &state, monitor: monitor, presence: presence) }
            state.entries[id] = Registered(presenter: presenter, path: path)
            Self.index(id, path: path, in: &state, monitor: monitor, presence: presence)
            presence?.presenterAdded(id)
            count.store(state.entries.count, ordering: .releasing)
        }
        monitor.sendOwedMessages()  // the monitor cannot message while the lock above is held
    }

    func remove(_ presenter: any FilePresenter) {
        let id = PresenterID(presenter)
        state.withLock { state in
            Self.unindex(id, in: &state, monitor: monitor, presence: presence)
            if state.entries.removeValue(forKey: id) != nil { presence?.presenterRemoved(id) }
            count.store(state.entries.count, ordering: .releasing)
        }
    }

    var all: [any FilePresenter] {
        state.withLock { state in state.entries.values.compactMap(\.presenter) }
    }

    /// The registered presenter with this ID, if it is still alive.
    func presenter(_ id: PresenterID) -> (any FilePresenter)? {
        state.withLock { $0.entries[id]?.presenter }
    }

    /// Presenters of exactly `path`.
    func presenters(at path: String) -> [(any FilePresenter, String)] {
        guard !isEmpty else { return [] }
        placeUnplaced()
        return state.withLock { state in Self.lookup(path, in: state) }
    }

    /// Addresses of the presenters of exactly `path`.
    func addresses(at path: String) -> [PresenterAddress] {
        guard !isEmpty else { return [] }
        placeUnplaced()
        return state.withLock { state in Self.addresses(path, in: state) }
    }

    /// Addresses of the presenters of the directories that contain `path`, nearest first.
    func addressesOfAncestors(of path: String) -> [PresenterAddress] {
        guard !isEmpty else { return [] }
        placeUnplaced()
        return state.withLock { state in
            // The lengths of the ancestors whose hash is indexed, found without building their
            // strings (as `concern(at:own:)` does); only those are looked up.
            var lengths: [Int] = []
            var hash = StableHash.offsetBasis
            var length = 0
            let utf8 = path.utf8
            for byte in utf8 {
                if byte == UInt8(ascii: "/"), length > 0, state.pathHashes[hash] != nil { lengths.append(length) }
                hash = StableHash.step(hash, byte)
                length += 1
                if length == 1, byte == UInt8(ascii: "/"), utf8.count > 1, state.pathHashes[hash] != nil { lengths.append(1) }  // "/"
            }
            return lengths.reversed().flatMap { Self.addresses(String(Substring(utf8.prefix($0))), in: state) }
        }
    }

    /// Addresses of the presenters of items strictly inside the directory `path`.
    func addressesInside(_ path: String) -> [PresenterAddress] {
        guard !isEmpty else { return [] }
        placeUnplaced()
        return state.withLock { state in
            state.byPath.keys.filter { CanonicalPath.isInside($0, path) }.sorted().flatMap { Self.addresses($0, in: state) }
        }
    }

    /// Re-keys every presenter at or inside `oldPath` to the same place under `newPath`.
    /// Returns the presenters moved, with their old and new paths.
    @discardableResult
    func move(from oldPath: String, to newPath: String) -> [(id: PresenterID, old: String, new: String)] {
        defer { monitor.sendOwedMessages() }  // the monitor cannot message while the lock is held
        return state.withLock { state in
            var moved: [(id: PresenterID, old: String, new: String)] = []
            for key in state.byPath.keys where key == oldPath || CanonicalPath.isInside(key, oldPath) {
                let destination = newPath + key.dropFirst(oldPath.count)
                for id in state.byPath[key] ?? [] where state.entries[id]?.presenter != nil {
                    moved.append((id, key, destination))
                }
            }
            for (id, _, destination) in moved {
                Self.unindex(id, in: &state, monitor: monitor, presence: presence)
                state.entries[id]?.path = destination
                Self.index(id, path: destination, in: &state, monitor: monitor, presence: presence)
            }
            return moved
        }
    }

    // MARK: Index upkeep (call with the lock held)

    private static func addresses(_ path: String, in state: State) -> [PresenterAddress] {
        guard let ids = state.byPath[path] else { return [] }
        return ids.compactMap { id in state.entries[id]?.presenter == nil ? nil : PresenterAddress(id: id, path: path) }
    }

    private static func lookup(_ path: String, in state: State) -> [(any FilePresenter, String)] {
        guard let ids = state.byPath[path] else { return [] }
        return ids.compactMap { id in state.entries[id]?.presenter.map { ($0, path) } }
    }

    private static func index(_ id: PresenterID, path: String?, in state: inout State, monitor: ChangeMonitor, presence: RemotePresence?) {
        if let path {
            state.byPath[path, default: []].append(id)
            state.pathHashes[StableHash.fnv1a64(path.utf8), default: 0] += 1
            monitor.watch(path)
            presence?.published(path)
        } else {
            state.unplaced.insert(id)
        }
    }

    private static func unindex(_ id: PresenterID, in state: inout State, monitor: ChangeMonitor, presence: RemotePresence?) {
        state.unplaced.remove(id)
        guard let path = state.entries[id]?.path else { return }
        monitor.unwatch(path)
        presence?.withdrawn(path)
        let hash = StableHash.fnv1a64(path.utf8)
        if let count = state.pathHashes[hash] {
            if count <= 1 { state.pathHashes.removeValue(forKey: hash) } else { state.pathHashes[hash] = count - 1 }
        }
        state.byPath[path]?.removeAll { $0 == id }
        if state.byPath[path]?.isEmpty == true { state.byPath.removeValue(forKey: path) }
    }

    /// Presenters added with a nil URL get indexed once they have one.
    private func placeUnplaced() {
        let waiting: [any FilePresenter] = state.withLock { state in
            state.unplaced.compactMap { state.entries[$0]?.presenter }
        }
        guard !waiting.isEmpty else { return }
        let placed = waiting.compactMap { presenter in
            presenter.presentedItemURL.map { (PresenterID(presenter), CanonicalPath.of($0, in: paths)) }
        }
        guard !placed.isEmpty else { return }
        state.withLock { state in
            for (id, path) in placed where state.unplaced.contains(id) {
                state.unplaced.remove(id)
                state.entries[id]?.path = path
                Self.index(id, path: path, in: &state, monitor: monitor, presence: presence)
            }
        }
        monitor.sendOwedMessages()
    }
}
