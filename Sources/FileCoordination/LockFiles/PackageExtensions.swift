import Synchronization

/// The registry of *package* extensions: directories with these extensions are documents, and any
/// access to an item inside one counts as access to the whole package. One per `CoordinationRuntime`.
final class PackageExtensions: Sendable {
    private let registered = Locked<Set<String>>([])
    /// Mirrors `registered.count`, so the usual "no package types at all" costs no lock.
    private let count = Atomic<Int>(0)
    /// Moves on every registration change (`ResolvedURLMemo` remembers package look-ups).
    let generation = ResolutionGeneration()

    func register(_ pathExtension: String) {
        let normalized = Self.normalize(pathExtension)
        guard !normalized.isEmpty else { return }
        registered.withLock { set in
            set.insert(normalized)
            count.store(set.count, ordering: .releasing)
        }
        generation.advance()  // remembered package look-ups are stale
    }

    func unregister(_ pathExtension: String) {
        registered.withLock { set in
            set.remove(Self.normalize(pathExtension))
            count.store(set.count, ordering: .releasing)
        }
        generation.advance()  // remembered package look-ups are stale
    }

    var all: Set<String> { registered.withLock { $0 } }

    /// The outermost package that contains `path` (or is `path`), if any.
    func outermostPackage(containing path: String) -> String? {
        guard count.load(ordering: .acquiring) > 0 else { return nil }
        let extensions = all
        guard !extensions.isEmpty else { return nil }
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            if let dot = component.lastIndex(of: "."), dot != component.startIndex {
                let ext = component[component.index(after: dot)...].lowercased()
                if extensions.contains(ext) { return current }
            }
        }
        return nil
    }

    func isPackage(_ path: String) -> Bool {
        outermostPackage(containing: path) == path
    }

    private static func normalize(_ value: String) -> String {
        (value.hasPrefix(".") ? String(value.dropFirst()) : value).lowercased()
    }
}
