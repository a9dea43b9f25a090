import Foundation
import Glibc
import Synchronization
import SystemSupport

/// Turns a file URL into the canonical path that names its lock: absolute, with `.` removed and
/// every symbolic link in the *parent* directories resolved **as the kernel resolves them** — a
/// link is followed before a `..` after it applies, so with `D/lnk -> D/real/sub`,
/// `D/lnk/../doc.txt` is `D/real/doc.txt` (the same inode), not `D/doc.txt`. The item itself is
/// not resolved (it may be a link, or not exist yet); a missing parent is resolved as far up as it
/// exists, and a `..` after a missing component removes it as text.
///
/// Canonical paths are lossless path strings (SystemSupport's `PathBytes`): a name that is not
/// valid UTF-8 keeps its bytes (escaped with NUL), so it names its own lock and the system calls
/// made on the path reach the right file. Use ``withCString(_:_:)`` / ``url(for:isDirectory:)``
/// to go back to the bytes; never pass a canonical path to a C function directly.
///
/// Resolving a parent costs a `realpath` (one `lstat` per component), so resolved parents are
/// cached (`PathCaches`, one per `CoordinationRuntime`; every function below is given its
/// runtime's). The cache entries under a directory are dropped when that directory is
/// moved or deleted through a coordinator (``invalidate(under:)``); a symbolic link *retargeted*
/// by an uncoordinated program while this process runs is noticed only after the cache is
/// dropped (see Docs/Coordination.md, "Limits").
enum CanonicalPath {
    /// The canonical path for `url` (a file URL).
    static func of(_ url: URL, in caches: PathCaches) -> String {
        caches.encodedPaths.value(for: url.path(percentEncoded: true)) { of(path: PathBytes.path(of: url), in: caches) }
    }

    /// The canonical path for a path given as a lossless path string.
    static func of(path rawPath: String, in caches: PathCaches) -> String {
        caches.paths.value(for: rawPath) {
            let normalized = withoutDots(rawPath)
            guard normalized != "/" else { return "/" }
            let (parent, name) = split(normalized)
            // "a/b/.." names the directory that `a/b` resolves to, not an entry in it.
            if name == ".." { return canonicalDirectory(normalized, in: caches) }
            return join(canonicalDirectory(parent, in: caches), name)
        }
    }

    /// The item fully resolved, links included (for `.resolvesSymbolicLink`).
    static func resolvingItem(_ url: URL, in caches: PathCaches) -> String {
        let path = withoutDots(PathBytes.path(of: url))
        if case .success(let resolved) = PathBytes.realPath(path) { return resolved }
        return of(path: path, in: caches)
    }

    /// Drops cached resolutions at or below `path` (a directory moved or deleted).
    static func invalidate(under path: String, in caches: PathCaches) {
        let prefix = path == "/" ? "/" : path + "/"
        let affected: (String) -> Bool = { $0 == path || $0.hasPrefix(prefix) }
        for cache in [caches.parents, caches.paths, caches.encodedPaths] {
            cache.drop { key, value in affected(key) || affected(value) }
        }
        caches.generation.advance()
    }

    /// Calls `body` with the exact bytes of a canonical path.
    static func withCString<R>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try PathBytes.withCString(path, body)
    }

    /// The file URL of a canonical path (its bytes percent-encoded when they are not UTF-8).
    static func url(for path: String, isDirectory: Bool = false) -> URL {
        PathBytes.fileURL(path, isDirectory: isDirectory)
    }

    /// `directory` (absolute, without `.` components, maybe with `..`) as the kernel resolves it.
    private static func canonicalDirectory(_ directory: String, in caches: PathCaches) -> String {
        if directory == "/" { return "/" }
        return caches.parents.value(for: directory) {
            if case .success(let real) = PathBytes.realPath(directory) { return real }
            let (parent, name) = split(directory)
            let resolvedParent = canonicalDirectory(parent, in: caches)
            // Missing, so nothing to follow: a `..` after it goes back up as text.
            if name == ".." { return split(resolvedParent).parent }
            return join(resolvedParent, name)
        }
    }

    /// Makes `path` absolute (against the working directory) and removes `.` components, repeated
    /// slashes and a trailing slash, without touching the file system. `..` is kept: only the
    /// kernel can tell where it leads (after a symbolic link, not to the text before it).
    static func withoutDots(_ path: String) -> String {
        var absolute = path
        if absolute.utf8.first != UInt8(ascii: "/") {
            absolute = PathBytes.string(fromBytes: PathBytes.currentDirectory()) + "/" + absolute
        }
        if isNormal(absolute) { return absolute }
        var parts: [Substring] = []
        for component in absolute.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let text = Substring(component)
            if text == "." { continue }
            parts.append(text)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// True when an absolute path has no `.` or `..` component, no `//` and no trailing `/`.
    private static func isNormal(_ path: String) -> Bool {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        var previous: UInt8 = 0, beforePrevious: UInt8 = 0, beforeThat: UInt8 = 0
        var count = 0
        for byte in path.utf8 {
            if byte == slash {
                if previous == slash { return false }                                     // "//"
                if previous == dot && beforePrevious == slash { return false }            // "/./"
                if previous == dot && beforePrevious == dot && beforeThat == slash { return false } // "/../"
            }
            beforeThat = beforePrevious; beforePrevious = previous; previous = byte
            count += 1
        }
        if count > 1 && previous == slash { return false }
        if previous == dot && beforePrevious == slash { return false }                     // ends "/."
        if previous == dot && beforePrevious == dot && beforeThat == slash { return false } // ends "/.."
        return true
    }

    static func split(_ path: String) -> (parent: String, name: String) {
        let utf8 = path.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("/", path) }
        let parent = slash == utf8.startIndex ? "/" : String(path[..<slash])
        return (parent, String(path[utf8.index(after: slash)...]))
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory == "/" ? "/" + name : directory + "/" + name
    }

    /// `path` and every directory above it, outermost first: "/a/b" → ["/", "/a", "/a/b"].
    static func selfAndAncestors(_ path: String) -> [String] {
        var result = ["/"]
        guard path != "/" else { return result }
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            result.append(current)
        }
        return result
    }

    /// True when `path` lies strictly inside `directory`.
    static func isInside(_ path: String, _ directory: String) -> Bool {
        if directory == "/" { return path != "/" }
        return path.count > directory.count && path.hasPrefix(directory)
            && path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: directory.utf8.count)] == UInt8(ascii: "/")
    }
}

/// The caches behind `CanonicalPath`, owned by a `CoordinationRuntime`.
final class PathCaches: Sendable {
    /// Moves whenever resolved paths are dropped (``CanonicalPath/invalidate(under:in:)``, a
    /// cache emptied at its limit): what remembers a resolution outside the caches
    /// (`ResolvedURLMemo`) keeps it only while this has not moved.
    let generation = ResolutionGeneration()
    /// Resolved parent directories.
    let parents: PathCache
    /// Whole paths already canonicalized: the hot path is one dictionary look-up.
    let paths: PathCache
    /// Keyed by the URL's percent-encoded path, which costs a sixth of `url.path` (no decoding);
    /// decoding happens only on a miss. Being ASCII, it also keeps apart names that differ only
    /// in their bytes (two Unicode normalization forms, or bytes that are not UTF-8).
    let encodedPaths: PathCache

    init() {
        parents = PathCache(generation: generation)
        paths = PathCache(generation: generation)
        encodedPaths = PathCache(generation: generation)
    }
}

/// A counter that moves each time answers remembered from something (a `PathCaches`, a
/// `PackageExtensions`) may have changed.
final class ResolutionGeneration: Sendable {
    private let counter = Atomic<UInt64>(0)

    /// The current value (read before resolving, so that a change made meanwhile shows).
    @inline(__always)
    var value: UInt64 { counter.load(ordering: .acquiring) }

    /// Marks what was remembered stale (called after the change was made).
    func advance() {
        counter.add(1, ordering: .releasing)
    }
}

/// A bounded, thread-safe string → string cache (emptied when it reaches its limit).
///
/// Paths are bytes, but Swift compares strings by canonical equivalence (`"é"` composed equals
/// `"e\u{301}"`): a hit counts only when the stored key has the same bytes as the one asked for,
/// so two names that differ only in their normalization never get each other's path.
final class PathCache: Sendable {
    private struct Entry { var key: String; var value: String }
    private let storage = Locked<[String: Entry]>([:])
    private static let limit = 4096
    /// Advanced when the cache is emptied at its limit (a re-resolution may differ).
    private let generation: ResolutionGeneration

    init(generation: ResolutionGeneration) {
        self.generation = generation
    }

    /// The cached value for `key`, or `make()`'s result, cached. `make` runs without the lock held.
    func value(for key: String, orMake make: () -> String) -> String {
        let cached = storage.withLock({ $0[key] })
        if let cached {
            if PathBytes.haveSameBytes(cached.key, key) { return cached.value }
            return make()  // same text, other bytes: not cached (rare)
        }
        let made = make()
        storage.withLock { cache in
            if cache.count >= Self.limit {
                cache.removeAll(keepingCapacity: true)
                generation.advance()
            }
            cache[key] = Entry(key: key, value: made)
        }
        return made
    }

    func drop(where shouldDrop: (String, String) -> Bool) {
        storage.withLock { cache in cache = cache.filter { !shouldDrop($0.value.key, $0.value.value) } }
    }
}
