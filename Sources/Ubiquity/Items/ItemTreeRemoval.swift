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
        switch PathBytes.withCString(path, { path in valueOrErrno { lstat(path, &info) } }) {
        case .success: break
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): return error
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return failureUnlessGone(PathBytes.withCString(path) { path in valueOrErrno { unlink(path) } })
        }
        let descriptor: Int32
        switch PathBytes.withCString(path, { path in valueOrErrno { open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } }) {
        case .success(let opened): descriptor = opened
        case .failure(let error): return error
        }
        let names = Self.names(inFolder: descriptor)
        _ = Glibc.close(descriptor)
        switch names {
        case .failure(let error): return error
        case .success(let names):
            for name in names {
                if let error = remove(join(path, name)) { return error }
            }
        }
        return failureUnlessGone(PathBytes.withCString(path) { path in valueOrErrno { rmdir(path) } })
    }

    /// The error of a removal, or nil when it succeeded or nothing was there (ENOENT).
    private static func failureUnlessGone(_ result: Result<Int32, Errno>) -> Errno? {
        switch result {
        case .success, .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): return error
        }
    }

    /// `fsync` of the folder at `path` (so that names created or removed in it last).
    static func syncFolder(_ path: String) -> Errno? {
        let descriptor: Int32
        switch PathBytes.withCString(path, { path in valueOrErrno { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } }) {
        case .success(let opened): descriptor = opened
        case .failure(let error): return error
        }
        defer { _ = Glibc.close(descriptor) }
        return fsync(descriptor) == 0 ? nil : .current
    }
}
