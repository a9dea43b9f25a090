import Foundation
import Glibc

// Thin throwing wrappers over the path-based POSIX calls, in the manner of apple/swift-system:
// every result is checked, EINTR is retried where the call may be interrupted
// (``valueOrErrno(retryOnInterrupt:_:)``), errno is read inside the call's closure, and failures
// become a ``SystemCallError`` naming the call, the path and errno. Every path is a
// ``SystemPath`` and reaches the kernel through ``SystemPath/withCString(_:)``, byte for byte: a
// name that is not valid UTF-8 is handled like any other. (POSIX+StringPaths.swift keeps
// `String` overloads for callers not yet moved to `SystemPath`.) Used for saving and reading documents and
// packages (CloudDocuments), and wherever another module needs the same calls.
// Every function may be called on any thread; none keeps state between calls.

/// Namespace for the path-based calls.
package enum POSIX {
    /// `open(2)`, retrying on EINTR. `O_CLOEXEC` is always added.
    package static func open(_ path: SystemPath, _ flags: Int32, mode: mode_t = 0) throws(SystemCallError) -> FileDescriptor {
        let fd = try path.withCString { cPath in
            valueOrErrno { Glibc.open(cPath, flags | O_CLOEXEC, mode) }
        }.get(call: "open", path: path.lossless)
        return FileDescriptor(rawValue: fd, path: path.lossless)
    }

    /// `lstat(2)` (does not follow a final symbolic link); `nil` if nothing is at `path`.
    package static func linkStatus(_ path: SystemPath) throws(SystemCallError) -> stat? {
        var info = stat()
        switch path.withCString({ cPath in valueOrErrno { lstat(cPath, &info) } }) {
        case .success: return info
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw SystemCallError(call: "lstat", path: path.lossless, errno: error)
        }
    }

    /// `stat(2)` (follows symbolic links); `nil` if nothing is at `path` (or a link dangles).
    package static func status(_ path: SystemPath) throws(SystemCallError) -> stat? {
        var info = stat()
        switch path.withCString({ cPath in valueOrErrno { stat(cPath, &info) } }) {
        case .success: return info
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw SystemCallError(call: "stat", path: path.lossless, errno: error)
        }
    }

    /// `mkdir(2)`; the process umask applies to `mode`.
    package static func makeDirectory(_ path: SystemPath, mode: mode_t) throws(SystemCallError) {
        _ = try path.withCString { cPath in valueOrErrno { mkdir(cPath, mode) } }
            .get(call: "mkdir", path: path.lossless)
    }

    /// `rename(2)`.
    package static func rename(_ source: SystemPath, to destination: SystemPath) throws(SystemCallError) {
        _ = try withCStrings(source, destination) { from, to in valueOrErrno { Glibc.rename(from, to) } }
            .get(call: "rename", path: destination.lossless)
    }

    /// `link(2)`.
    package static func link(_ source: SystemPath, to destination: SystemPath) throws(SystemCallError) {
        _ = try withCStrings(source, destination) { from, to in valueOrErrno { Glibc.link(from, to) } }
            .get(call: "link", path: destination.lossless)
    }

    /// `unlink(2)`.
    package static func unlink(_ path: SystemPath) throws(SystemCallError) {
        _ = try path.withCString { cPath in valueOrErrno { Glibc.unlink(cPath) } }
            .get(call: "unlink", path: path.lossless)
    }

    /// `unlink(2)`, ignoring failure (for cleaning up after another failure).
    package static func removeFileQuietly(_ path: SystemPath) {
        _ = path.withCString { Glibc.unlink($0) }
    }

    /// Calls `body` with the exact bytes of two paths.
    package static func withCStrings<R>(_ first: SystemPath, _ second: SystemPath,
                                        _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> R) -> R {
        first.withCString { a in second.withCString { b in body(a, b) } }
    }

    /// Flags of `renameat2(2)`.
    package typealias RenameFlag = RenameAt2.Flag

    /// `renameat2(2)` with one flag (``RenameAt2``). Throws errno ENOSYS when the kernel lacks the
    /// call; file systems that lack the flag answer EINVAL (callers fall back on both).
    package static func rename(_ source: SystemPath, to destination: SystemPath, flag: RenameFlag) throws(SystemCallError) {
        let call = flag == .exchange ? "renameat2(RENAME_EXCHANGE)" : "renameat2(RENAME_NOREPLACE)"
        try RenameAt2.rename(source.lossless, to: destination.lossless, flag: flag).get(call: call, path: destination.lossless)
    }

    /// Whether a `renameat2` failure means "this kernel, C library or file system does not
    /// support the flag" rather than a real failure.
    package static func isUnsupported(_ error: SystemCallError) -> Bool { RenameAt2.isUnsupported(error.errno) }

    /// Opens a directory and `fsync`s it, so that entries created, renamed or removed in it
    /// survive a power loss.
    package static func syncDirectory(_ path: SystemPath) throws(SystemCallError) {
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
    package static func directoryEntries(_ path: SystemPath) throws(SystemCallError) -> (names: [String], invalid: [String]) {
        let stream = try path.withCString { cPath in pointerOrErrno { opendir(cPath) } }
            .get(call: "opendir", path: path.lossless)
        defer { closedir(stream) }
        var names: [String] = []
        var invalid: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemCallError(call: "readdir", path: path.lossless, code: errno) }
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
    package static func resolvedPath(_ path: SystemPath) -> SystemPath? {
        (try? PathBytes.realPath(path.lossless).get()).map(SystemPath.init(lossless:))
    }

    /// The process's file creation mask, read from `/proc/self/status` without changing it
    /// (`umask(2)` can only be read by setting it, which races with other threads). Falls back to
    /// `0o022` when the line is missing (kernels before 4.7).
    package static func currentUmask() -> mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0o022 }
        for line in status.split(separator: "\n") where line.hasPrefix("Umask:") {
            let value = line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces)
            if let mask = mode_t(value, radix: 8) { return mask }
        }
        return 0o022
    }
}
