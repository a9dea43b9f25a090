import Foundation
import Glibc
import Synchronization

/// Turns a file URL into the canonical path that names its lock: absolute, with `.` and `..`
/// removed and every symbolic link in the *parent* directories resolved. The item itself is not
/// resolved (it may be a link, or not exist yet); a missing parent is resolved as far up as it
/// exists.
///
/// Resolving a parent costs a `realpath` (one `lstat` per component), so resolved parents are
/// cached per process. The cache entries under a directory are dropped when that directory is
/// moved or deleted through a coordinator (``invalidate(under:)``); a symbolic link *retargeted*
/// by an uncoordinated program while this process runs is noticed only after the cache is
/// dropped (see Docs/Coordination.md, "Limits").
enum CanonicalPath {
    /// Resolved parent directories.
    private static let parents = PathCache()
    /// Whole paths already canonicalized: the hot path is one dictionary look-up.
    private static let paths = PathCache()
    /// Keyed by the URL's percent-encoded path, which costs a sixth of `url.path` (no decoding);
    /// decoding happens only on a miss.
    private static let encodedPaths = PathCache()

    /// The canonical path for `url` (a file URL).
    static func of(_ url: URL) -> String {
        encodedPaths.value(for: url.path(percentEncoded: true)) { of(path: url.path) }
    }

    static func of(path rawPath: String) -> String {
        paths.value(for: rawPath) {
            let lexical = lexicallyNormalized(rawPath)
            guard lexical != "/" else { return "/" }
            let (parent, name) = split(lexical)
            return join(canonicalDirectory(parent), name)
        }
    }

    /// The item fully resolved, links included (for `.resolvesSymbolicLink`).
    static func resolvingItem(_ url: URL) -> String {
        let lexical = lexicallyNormalized(url.path)
        if let resolved = realPath(lexical) { return resolved }
        return of(path: lexical)
    }

    /// Drops cached resolutions at or below `path` (a directory moved or deleted).
    static func invalidate(under path: String) {
        let prefix = path == "/" ? "/" : path + "/"
        let affected: (String) -> Bool = { $0 == path || $0.hasPrefix(prefix) }
        for cache in [parents, paths, encodedPaths] {
            cache.drop { key, value in affected(key) || affected(value) }
        }
    }

    private static func canonicalDirectory(_ directory: String) -> String {
        if directory == "/" { return "/" }
        return parents.value(for: directory) {
            if let real = realPath(directory) { return real }
            let (parent, name) = split(directory)
            return join(canonicalDirectory(parent), name)
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }

    /// Makes `path` absolute (against the working directory) and removes `.`, `..` and repeated
    /// slashes, without touching the file system.
    static func lexicallyNormalized(_ path: String) -> String {
        var absolute = path
        if !absolute.hasPrefix("/") {
            absolute = FileManager.default.currentDirectoryPath + "/" + absolute
        }
        if isNormal(absolute) { return absolute }
        var parts: [Substring] = []
        for component in absolute.split(separator: "/", omittingEmptySubsequences: true) {
            if component == "." { continue }
            if component == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(component)
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

/// A bounded, thread-safe string → string cache (emptied when it reaches its limit).
final class PathCache: Sendable {
    private let storage = Locked<[String: String]>([:])
    private static let limit = 4096

    /// The cached value for `key`, or `make()`'s result, cached. `make` runs without the lock held.
    func value(for key: String, orMake make: () -> String) -> String {
        if let hit = storage.withLock({ $0[key] }) { return hit }
        let made = make()
        storage.withLock { cache in
            if cache.count >= Self.limit { cache.removeAll(keepingCapacity: true) }
            cache[key] = made
        }
        return made
    }

    func drop(where shouldDrop: (String, String) -> Bool) {
        storage.withLock { cache in cache = cache.filter { !shouldDrop($0.key, $0.value) } }
    }
}
