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
    private static let parentCache = Mutex<[String: String]>([:])
    private static let cacheLimit = 4096

    /// The canonical path for `url` (a file URL).
    static func of(_ url: URL) -> String {
        of(path: url.path)
    }

    static func of(path rawPath: String) -> String {
        let lexical = lexicallyNormalized(rawPath)
        guard lexical != "/" else { return "/" }
        let (parent, name) = split(lexical)
        return join(canonicalDirectory(parent), name)
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
        parentCache.withLock { cache in
            cache = cache.filter { key, value in
                !(key == path || key.hasPrefix(prefix) || value == path || value.hasPrefix(prefix))
            }
        }
    }

    private static func canonicalDirectory(_ directory: String) -> String {
        if directory == "/" { return "/" }
        if let hit = parentCache.withLock({ $0[directory] }) { return hit }
        let resolved: String
        if let real = realPath(directory) {
            resolved = real
        } else {
            let (parent, name) = split(directory)
            resolved = join(canonicalDirectory(parent), name)
        }
        parentCache.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[directory] = resolved
        }
        return resolved
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
        if !absolute.contains("/.") && !absolute.contains("//") && (absolute.count == 1 || !absolute.hasSuffix("/")) {
            return absolute
        }
        var parts: [Substring] = []
        for component in absolute.split(separator: "/", omittingEmptySubsequences: true) {
            if component == "." { continue }
            if component == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(component)
        }
        return "/" + parts.joined(separator: "/")
    }

    static func split(_ path: String) -> (parent: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("/", path) }
        let parent = slash == path.startIndex ? "/" : String(path[..<slash])
        return (parent, String(path[path.index(after: slash)...]))
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
