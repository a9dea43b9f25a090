import Foundation
import Glibc

// Path-based POSIX calls; see POSIXFile.swift for the conventions. Any thread.

/// Namespace for the path-based calls.
enum POSIX {
    /// `open(2)`, retrying on EINTR. `O_CLOEXEC` is always added.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemCallError) -> FileDescriptor {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return FileDescriptor(rawValue: fd, path: path) }
            if errno == EINTR { continue }
            throw SystemCallError(call: "open", path: path, code: errno)
        }
    }

    /// `lstat(2)` (does not follow a final symbolic link); `nil` if nothing is at `path`.
    static func linkStatus(_ path: String) throws(SystemCallError) -> stat? {
        var info = stat()
        if lstat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw SystemCallError(call: "lstat", path: path, code: errno)
    }

    /// `stat(2)` (follows symbolic links); `nil` if nothing is at `path` (or a link dangles).
    static func status(_ path: String) throws(SystemCallError) -> stat? {
        var info = stat()
        if stat(path, &info) == 0 { return info }
        if errno == ENOENT { return nil }
        throw SystemCallError(call: "stat", path: path, code: errno)
    }

    /// `mkdir(2)`; the process umask applies to `mode`.
    static func makeDirectory(_ path: String, mode: mode_t) throws(SystemCallError) {
        if mkdir(path, mode) != 0 { throw SystemCallError(call: "mkdir", path: path, code: errno) }
    }

    /// `rename(2)`.
    static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        if Glibc.rename(source, destination) != 0 {
            throw SystemCallError(call: "rename", path: destination, code: errno)
        }
    }

    /// `link(2)`.
    static func link(_ source: String, to destination: String) throws(SystemCallError) {
        if Glibc.link(source, destination) != 0 {
            throw SystemCallError(call: "link", path: destination, code: errno)
        }
    }

    /// `unlink(2)`.
    static func unlink(_ path: String) throws(SystemCallError) {
        if Glibc.unlink(path) != 0 { throw SystemCallError(call: "unlink", path: path, code: errno) }
    }

    /// Flags of `renameat2(2)` (from `<linux/fs.h>`; not exported by the Glibc module).
    enum RenameFlag: UInt32 {
        /// Fail with EEXIST if the destination exists.
        case noReplace = 1
        /// Swap source and destination atomically; both must exist.
        case exchange = 2
    }

    private typealias RenameAt2 = @convention(c) (
        Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32
    ) -> Int32

    /// glibc's `renameat2` wrapper (glibc 2.28+). The Glibc module does not import it, and
    /// `syscall(2)` is variadic and so not callable from Swift; it is looked up once.
    private static let renameAt2Function: RenameAt2? = {
        guard let symbol = dlsym(nil, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: RenameAt2.self)
    }()

    /// `renameat2(2)` with one flag. Throws errno ENOSYS when the C library lacks the call;
    /// file systems that lack the flag answer EINVAL (callers fall back on both).
    static func rename(_ source: String, to destination: String, flag: RenameFlag) throws(SystemCallError) {
        let call = flag == .exchange ? "renameat2(RENAME_EXCHANGE)" : "renameat2(RENAME_NOREPLACE)"
        guard let function = renameAt2Function else {
            throw SystemCallError(call: call, path: destination, code: ENOSYS)
        }
        if function(AT_FDCWD, source, AT_FDCWD, destination, flag.rawValue) != 0 {
            throw SystemCallError(call: call, path: destination, code: errno)
        }
    }

    /// Whether a `renameat2` failure means "this kernel, C library or file system does not
    /// support the flag" rather than a real failure.
    static func isUnsupported(_ error: SystemCallError) -> Bool {
        error.code == EINVAL || error.code == ENOSYS || error.code == EOPNOTSUPP
    }

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
        guard let stream = opendir(path) else {
            throw SystemCallError(call: "opendir", path: path, code: errno)
        }
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
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
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
