import Foundation
import FileCoordination
import SyncAgent

/// A ``RemoteStore`` in memory for the engine's tests: a tree of files and folders, a fresh
/// strong tag for every write (never reused, even after ``restore(_:)``), and conditions honoured
/// strictly (`If-None-Match: *`, `If-Match` on PUT, DELETE and MOVE → `preconditionFailed`).
/// ``contents`` / ``restore(_:)`` swap the whole tree (a server rolled back to an older copy);
/// ``failure`` makes every call fail (an offline server). Sendable: the state is in a `Locked` (a pthread mutex ThreadSanitizer sees; `Synchronization.Mutex` sleeps in raw futex calls it does not).
final class InMemoryRemoteStore: RemoteStore, Sendable {
    struct Node: Sendable, Equatable {
        var isFolder: Bool
        var data: Data
        var tag: RemoteTag
        /// A file id that survives rewrites and moves (given out only with ``givesFileIDs``).
        var id = UUID().uuidString
    }

    struct State: Sendable {
        var nodes: [RemotePath: Node] = [:]
        var nextTag = 1
        var failure: RemoteStoreError?
        var uploads = 0
        var downloads = 0
        var beforeNextUpload: (@Sendable (inout State) -> Void)?
        /// Runs once, right after the next upload was stored (another client writing between the
        /// agent's `PUT` and its next request).
        var afterNextUpload: (@Sendable (inout State) -> Void)?
        /// Runs once, right after the next download's bytes were read (another client writing
        /// while the agent downloads).
        var afterNextDownload: (@Sendable (inout State) -> Void)?
        /// Runs once, at the start of the next `MOVE`.
        var beforeNextMove: (@Sendable (inout State) -> Void)?
        /// Called with the paths of every item at the start of each upload (to watch what the
        /// server shows while a package is uploaded).
        var onUpload: (@Sendable ([RemotePath]) -> Void)?
        /// Whether a `PUT` answer carries the new tag (Apache's does not).
        var tagsInPutAnswers = true
        var lists = 0
    }

    private let state = Locked(State())
    /// Whether the root's tag changes with every write below it (Nextcloud's folder tags).
    let propagatesFolderTags: Bool
    /// Whether items carry file ids (`oc:fileid`).
    let givesFileIDs: Bool

    init(propagatesFolderTags: Bool = false, givesFileIDs: Bool = false) {
        self.propagatesFolderTags = propagatesFolderTags
        self.givesFileIDs = givesFileIDs
    }

    /// How many folder listings were asked for.
    var listCount: Int { state.withLock { $0.lists } }

    var displayName: String { "memory" }

    var capabilities: RemoteCapabilities {
        get async {
            RemoteCapabilities(honoursConditions: true, strongTagsImmediately: true, tagChangesOnEveryWrite: true,
                               folderTagsPropagate: propagatesFolderTags, hasFileIDs: givesFileIDs, tagInWriteResponse: true)
        }
    }

    func probe() async throws(RemoteStoreError) -> RemoteCapabilities { await capabilities }

    // MARK: Test controls

    /// The whole tree now (to restore later).
    var contents: [RemotePath: Node] { state.withLock { $0.nodes } }

    /// Replaces the whole tree (tags of the restored items stay as they were then).
    func restore(_ nodes: [RemotePath: Node]) { state.withLock { $0.nodes = nodes } }

    /// Makes every call fail with `error` (`nil`: work again).
    func setFailure(_ error: RemoteStoreError?) { state.withLock { $0.failure = error } }

    var uploadCount: Int { state.withLock { $0.uploads } }

    /// Runs `change` on the tree at the start of the next upload (another client writing between
    /// the agent's listing and its `PUT`).
    func beforeNextUpload(_ change: @escaping @Sendable (inout State) -> Void) { state.withLock { $0.beforeNextUpload = change } }

    /// See ``State/afterNextUpload``.
    func afterNextUpload(_ change: @escaping @Sendable (inout State) -> Void) { state.withLock { $0.afterNextUpload = change } }

    /// See ``State/afterNextDownload``.
    func afterNextDownload(_ change: @escaping @Sendable (inout State) -> Void) { state.withLock { $0.afterNextDownload = change } }

    /// See ``State/beforeNextMove``.
    func beforeNextMove(_ change: @escaping @Sendable (inout State) -> Void) { state.withLock { $0.beforeNextMove = change } }

    /// See ``State/onUpload``.
    func onUpload(_ observer: @escaping @Sendable ([RemotePath]) -> Void) { state.withLock { $0.onUpload = observer } }

    /// Makes `PUT` answers carry no tag (as Apache's), so the agent reads it with a listing.
    func setTagsInPutAnswers(_ value: Bool) { state.withLock { $0.tagsInPutAnswers = value } }

    /// Writes a file inside a ``beforeNextUpload(_:)`` change.
    static func put(_ text: String, at path: String, in state: inout State) {
        guard let remote = RemotePath(path) else { return }
        state.nodes[remote] = Node(isFolder: false, data: Data(text.utf8), tag: newTag(&state))
    }
    var downloadCount: Int { state.withLock { $0.downloads } }

    /// The bytes of the file at `path` (`nil` when missing or a folder).
    func data(at path: String) -> Data? {
        guard let remote = RemotePath(path) else { return nil }
        return state.withLock { state in state.nodes[remote].flatMap { $0.isFolder ? nil : $0.data } }
    }

    /// The paths of every item, sorted.
    var paths: [String] { state.withLock { $0.nodes.keys.map(\.description).sorted() } }

    /// Writes a file directly (another client), creating its folders.
    func put(_ text: String, at path: String) {
        guard let remote = RemotePath(path) else { return }
        state.withLock { state in
            var folder = RemotePath.root
            for component in remote.components.dropLast() {
                guard let next = folder.appending(component) else { return }
                if state.nodes[next] == nil { state.nodes[next] = Node(isFolder: true, data: Data(), tag: Self.newTag(&state)) }
                folder = next
            }
            state.nodes[remote] = Node(isFolder: false, data: Data(text.utf8), tag: Self.newTag(&state))
        }
    }

    private static func newTag(_ state: inout State) -> RemoteTag {
        defer { state.nextTag += 1 }
        return RemoteTag(strong: "\"t\(state.nextTag)\"")
    }

    // MARK: RemoteStore

    private func checkFailure() throws(RemoteStoreError) {
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    private func item(_ path: RemotePath, _ node: Node) -> RemoteItem {
        RemoteItem(path: path, isFolder: node.isFolder, tag: node.tag, size: node.isFolder ? nil : Int64(node.data.count),
                   modified: nil, fileID: givesFileIDs ? node.id : nil)
    }

    private static func exists(_ path: RemotePath, in state: State) -> Bool { path.isRoot || state.nodes[path] != nil }

    private static func isFolder(_ path: RemotePath, in state: State) -> Bool { path.isRoot || state.nodes[path]?.isFolder == true }

    private static func check(_ condition: RemoteWriteCondition, _ node: Node?, _ path: RemotePath) throws(RemoteStoreError) {
        switch condition {
        case .mustNotExist: if node != nil { throw .preconditionFailed(path) }
        case .mustMatch(let tag): if node?.tag != tag { throw .preconditionFailed(path) }
        case .unconditional: break
        }
    }

    func item(at path: RemotePath) async throws(RemoteStoreError) -> RemoteItem? {
        try checkFailure()
        if path.isRoot {
            // With propagation, the root's tag is the last tag given out (any write changes it).
            let tag = propagatesFolderTags ? state.withLock { RemoteTag(strong: "\"root\($0.nextTag)\"") } : nil
            return RemoteItem(path: .root, isFolder: true, tag: tag, size: nil, modified: nil)
        }
        return state.withLock { $0.nodes[path].map { self.item(path, $0) } }
    }

    func list(_ path: RemotePath) async throws(RemoteStoreError) -> [RemoteItem] {
        try checkFailure()
        let result: [RemoteItem]? = state.withLock { state in
            state.lists += 1
            guard Self.isFolder(path, in: state) else { return nil }
            return state.nodes.filter { $0.key.parent == path }.map { self.item($0.key, $0.value) }.sorted { $0.path < $1.path }
        }
        guard let result else { throw .notFound(path) }
        return result
    }

    func download(_ path: RemotePath, to destination: URL,
                  progress: @escaping @Sendable (Int64, Int64?) -> Void) async throws(RemoteStoreError) -> RemoteTag? {
        try checkFailure()
        let node: Node? = state.withLock { state in
            state.downloads += 1
            let node = state.nodes[path]
            if let change = state.afterNextDownload {
                state.afterNextDownload = nil
                change(&state)
            }
            return node
        }
        guard let node, !node.isFolder else { throw .notFound(path) }
        do { try node.data.write(to: destination) } catch { throw .localFile(destination, errno: nil) }
        progress(Int64(node.data.count), Int64(node.data.count))
        return node.tag
    }

    func upload(_ source: URL, to path: RemotePath, condition: RemoteWriteCondition,
                progress: @escaping @Sendable (Int64, Int64) -> Void) async throws(RemoteStoreError) -> RemoteTag? {
        try checkFailure()
        let data: Data
        do { data = try Data(contentsOf: source) } catch { throw .localFile(source, errno: nil) }
        let tag: RemoteTag? = try state.withLock { (state: inout State) throws(RemoteStoreError) -> RemoteTag? in
            state.onUpload?(Array(state.nodes.keys))
            if let change = state.beforeNextUpload {
                state.beforeNextUpload = nil
                change(&state)
            }
            guard let parent = path.parent, Self.isFolder(parent, in: state) else { throw .notFound(path) }
            let node = state.nodes[path]
            if node?.isFolder == true { throw .unexpectedStatus(405, method: "PUT", path: path) }
            try Self.check(condition, node, path)
            let tag = Self.newTag(&state)
            var written = Node(isFolder: false, data: data, tag: tag)
            if let node { written.id = node.id }
            state.nodes[path] = written
            state.uploads += 1
            if let change = state.afterNextUpload {
                state.afterNextUpload = nil
                change(&state)
            }
            return state.tagsInPutAnswers ? tag : nil
        }
        progress(Int64(data.count), Int64(data.count))
        return tag
    }

    func makeFolder(_ path: RemotePath) async throws(RemoteStoreError) {
        try checkFailure()
        try state.withLock { (state: inout State) throws(RemoteStoreError) in
            guard let parent = path.parent, Self.isFolder(parent, in: state) else { throw .notFound(path) }
            if let node = state.nodes[path] {
                if node.isFolder { return }
                throw .unexpectedStatus(405, method: "MKCOL", path: path)
            }
            state.nodes[path] = Node(isFolder: true, data: Data(), tag: Self.newTag(&state))
        }
    }

    func delete(_ path: RemotePath, condition: RemoteWriteCondition) async throws(RemoteStoreError) {
        try checkFailure()
        try state.withLock { (state: inout State) throws(RemoteStoreError) in
            guard let node = state.nodes[path] else { throw .notFound(path) }
            try Self.check(condition, node, path)
            state.nodes = state.nodes.filter { !$0.key.isInside(path) }
            state.nextTag += 1  // the root's tag changes (with propagation)
        }
    }

    func move(_ source: RemotePath, to destination: RemotePath, condition: RemoteWriteCondition) async throws(RemoteStoreError) {
        try checkFailure()
        try state.withLock { (state: inout State) throws(RemoteStoreError) in
            if let change = state.beforeNextMove {
                state.beforeNextMove = nil
                change(&state)
            }
            guard let node = state.nodes[source] else { throw .notFound(source) }
            try Self.check(condition, node, source)
            guard state.nodes[destination] == nil else { throw .preconditionFailed(destination) }
            guard let parent = destination.parent, Self.isFolder(parent, in: state) else { throw .notFound(destination) }
            state.nextTag += 1
            for (path, moved) in state.nodes where path.isInside(source) {
                state.nodes[path] = nil
                if let target = RemotePath(components: destination.components + path.components.dropFirst(source.components.count)) {
                    state.nodes[target] = moved
                }
            }
        }
    }
}
