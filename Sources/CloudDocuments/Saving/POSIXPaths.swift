import Foundation
import Glibc
import SystemSupport

// Path-based POSIX calls; see POSIXFile.swift for the conventions. Every path is a lossless path
// string and reaches the kernel through `PathBytes.withCString`, byte for byte. Any thread.

/// Namespace for the path-based calls.
enum POSIX {
    /// `open(2)`, retrying on EINTR. `O_CLOEXEC` is always added.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemCallError) -> FileDescriptor {
        let fd = try PathBytes.withCString(path) { cPath in
            valueOrErrno { Glibc.open(cPath, flags | O_CLOEXEC, mode) }
        }.get(call: "open", path: path)
        return FileDescriptor(rawValue: fd, path: path)
    }

    /// `lstat(2)` (does not follow a final symbolic link); `nil` if nothing is at `path`.
    static func linkStatus(_ path: String) throws(SystemCallError) -> stat? {
        var info = stat()
        switch PathBytes.withCString(path, { cPath in valueOrErrno { lstat(cPath, &info) } }) {
        case .success: return info
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw SystemCallError(call: "lstat", path: path, errno: error)
        }
    }

    /// `stat(2)` (follows symbolic links); `nil` if nothing is at `path` (or a link dangles).
    static func status(_ path: String) throws(SystemCallError) -> stat? {
        var info = stat()
        switch PathBytes.withCString(path, { cPath in valueOrErrno { stat(cPath, &info) } }) {
        case .success: return info
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw SystemCallError(call: "stat", path: path, errno: error)
        }
    }

    /// `mkdir(2)`; the process umask applies to `mode`.
    static func makeDirectory(_ path: String, mode: mode_t) throws(SystemCallError) {
        _ = try PathBytes.withCString(path) { cPath in valueOrErrno { mkdir(cPath, mode) } }
            .get(call: "mkdir", path: path)
    }

    /// `rename(2)`.
    static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        _ = try withCStrings(source, destination) { from, to in valueOrErrno { Glibc.rename(from, to) } }
            .get(call: "rename", path: destination)
    }

    /// `link(2)`.
    static func link(_ source: String, to destination: String) throws(SystemCallError) {
        _ = try withCStrings(source, destination) { from, to in valueOrErrno { Glibc.link(from, to) } }
            .get(call: "link", path: destination)
    }

    /// `unlink(2)`.
    static func unlink(_ path: String) throws(SystemCallError) {
        _ = try PathBytes.withCString(path) { cPath in valueOrErrno { Glibc.unlink(cPath) } }
            .get(call: "unlink", path: path)
    }

    /// `unlink(2)`, ignoring failure (for cleaning up after another failure).
    static func removeFileQuietly(_ path: String) {
        _ = PathBytes.withCString(path) { Glibc.unlink($0) }
    }

    /// Calls `body` with the exact bytes of two lossless path strings.
    static func withCStrings<R>(_ first: String, _ second: String,
                                _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> R) -> R {
        PathBytes.withCString(first) { a in PathBytes.withCString(second) { b in body(a, b) } }
    }

    /// Flags of `renameat2(2)`.
    typealias RenameFlag = RenameAt2.Flag

    /// `renameat2(2)` with one flag (``RenameAt2``). Throws errno ENOSYS when the C library lacks
    /// the call; file systems that lack the flag answer EINVAL (callers fall back on both).
    static func rename(_ source: String, to destination: String, flag: RenameFlag) throws(SystemCallError) {
        let call = flag == .exchange ? "renameat2(RENAME_EXCHANGE)" : "renameat2(RENAME_NOREPLACE)"
        try RenameAt2.rename(source, to: destination, flag: flag).get(call: call, path: destination)
    }

    /// Whether a `renameat2` failure means "this kernel, C library or file system does not
    /// support the flag" rather than a real failure.
    static func isUnsupported(_ error: SystemCallError) -> Bool { RenameAt2.isUnsupported(error.errno) }

    /// Opens a directory and `fsync`s it, so that entries created, renamed or removed in it
    /// survive a power loss.
    static func syncDirectory(_ path: String) throws(SystemCallError) {
        let directory = try open(path, O_RDONLY | O_DIRECTORY)
        do {
            try directory.sync()
        } catch {
            _ = Glibc.close(directory.rawValue)
            throw error
        }
        try directory.close()
    }

    /// The names in a directory, without `"."` and `".."`, in directory order. Names that are not
    /// valid UTF-8 are not in `names`: they are returned in `invalid`, decoded with replacement
    /// characters, for an error message.
    static func directoryEntries(_ path: String) throws(SystemCallError) -> (names: [String], invalid: [String]) {
        let stream = try PathBytes.withCString(path) { cPath in pointerOrErrno { opendir(cPath) } }
            .get(call: "opendir", path: path)
        defer { closedir(stream) }
        var names: [String] = []
        var invalid: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemCallError(call: "readdir", path: path, code: errno) }
                return (names, invalid)
            }
            let decoded: String? = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let bytes = raw.prefix(while: { $0 != 0 })
                return String(validating: bytes, as: UTF8.self)
            }
            guard let name = decoded else {
                invalid.append(withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                })
                continue
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
    }

    /// `realpath(3)`: the absolute path with every symbolic link resolved, or `nil` on failure
    /// (for example a dangling link).
    static func resolvedPath(_ path: String) -> String? {
        try? PathBytes.realPath(path).get()
    }

    /// The process's file creation mask, read from `/proc/self/status` without changing it
    /// (`umask(2)` can only be read by setting it, which races with other threads). Falls back to
    /// `0o022` when the line is missing (kernels before 4.7).
    static func currentUmask() -> mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0o022 }
        for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
            let value = line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces)
            if let mask = mode_t(value, radix: 8) { return mask }
        }
        return 0o022
    }
}
