import Glibc
import SystemSupport

/// Reading and removing trees of items by their exact bytes (lossless path strings, `PathBytes`),
/// without following symbolic links: what moves across file systems and coordinated deletes use.
/// Internal; any thread.
enum ItemTree {
    /// The names (exact bytes, without `.` and `..`) in the folder open as `descriptor`, read to
    /// the end before anything is changed. The descriptor stays open and owned by the caller.
    static func names(inFolder descriptor: Int32) -> Result<[[UInt8]], Errno> {
        FolderEntries.names(inFolder: descriptor)
    }

    /// `folder/name` as a lossless path string.
    static func join(_ folder: String, _ name: [UInt8]) -> String {
        (folder.hasSuffix("/") ? folder : folder + "/") + PathBytes.string(fromBytes: name)
    }

    /// `path` without trailing slashes (a folder URL's path has one), except for `/` itself.
    static func withoutTrailingSlashes(_ path: String) -> String {
        var path = path
        while path.utf8.count > 1, path.utf8.last == UInt8(ascii: "/") { path.removeLast() }
        return path
    }

    /// The folder of `path` (no trailing slash) and the bytes of its last component; nil for `/`.
    static func split(_ path: String) -> (folder: String, name: [UInt8])? {
        let bytes = PathBytes.bytes(of: withoutTrailingSlashes(path))
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash + 1 < bytes.count else { return nil }
        return (slash == 0 ? "/" : PathBytes.string(fromBytes: bytes[..<slash]), Array(bytes[(slash + 1)...]))
    }

    /// Removes the item at `path` — a folder with everything inside it — without following
    /// symbolic links. Stops at the first failure and returns it (what was removed before stays
    /// removed); nothing there is success.
    static func remove(_ path: String) -> Errno? {
        var info = stat()
        if PathBytes.withCString(path, { lstat($0, &info) }) != 0 {
            return errno == ENOENT ? nil : .current
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return PathBytes.withCString(path, { unlink($0) }) == 0 || errno == ENOENT ? nil : .current
        }
        let descriptor = PathBytes.withCString(path) { path in
            retryingOnInterrupt { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        }
        guard descriptor >= 0 else { return .current }
        let names = Self.names(inFolder: descriptor)
        _ = Glibc.close(descriptor)
        switch names {
        case .failure(let error): return error
        case .success(let names):
            for name in names {
                if let error = remove(join(path, name)) { return error }
            }
        }
        return PathBytes.withCString(path, { rmdir($0) }) == 0 || errno == ENOENT ? nil : .current
    }

    /// `fsync` of the folder at `path` (so that names created or removed in it last).
    static func syncFolder(_ path: String) -> Errno? {
        let descriptor = PathBytes.withCString(path) { path in
            retryingOnInterrupt { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        guard descriptor >= 0 else { return .current }
        defer { _ = Glibc.close(descriptor) }
        return fsync(descriptor) == 0 ? nil : .current
    }
}
