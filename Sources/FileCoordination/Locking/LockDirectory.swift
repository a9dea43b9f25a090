import Foundation
import Glibc
import Synchronization

/// The private, per-user directory that holds the lock files.
///
/// Chosen in this order: `$CLOUDDOCUMENTS_LOCK_DIR`; `$XDG_RUNTIME_DIR/clouddocuments` (when that
/// runtime directory exists — CI and `su` sessions often set it to one that does not); a per-user
/// folder `clouddocuments-<uid>` under the temporary directory (`$TMPDIR`, else `/tmp`). It is created
/// with mode 0700 when missing, and refused when it is a symbolic link, is not a directory, is owned
/// by another user, or can be written by group or others — each of those would let another user
/// hold, or fake, our locks.
struct LockDirectory: Sendable, Equatable {
    let path: String

    static let environmentVariable = "CLOUDDOCUMENTS_LOCK_DIR"

    /// The lock directory for this process, validated once and then cached (the environment is
    /// read at the first coordination).
    static func current() throws(CoordinationError) -> LockDirectory {
        try resolvedOnce.get()
    }
    private static let resolvedOnce = Result<LockDirectory, CoordinationError> { () throws(CoordinationError) in
        try resolve(environment: ProcessInfo.processInfo.environment)
    }

    /// Picks, creates and validates the lock directory for the given environment.
    static func resolve(environment: [String: String]) throws(CoordinationError) -> LockDirectory {
        let path: String
        if let explicit = environment[environmentVariable], !explicit.isEmpty {
            path = explicit
        } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, isDirectory(runtime) {
            path = runtime + "/clouddocuments"
        } else {
            let temp = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            path = temp + "/clouddocuments-\(geteuid())"
        }
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        return try validate(trimmed)
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates `path` (mode 0700) if missing, then checks it is safe to use.
    static func validate(_ path: String) throws(CoordinationError) -> LockDirectory {
        guard path.hasPrefix("/") else {
            throw .lockDirectoryUnusable(path: path, reason: "it is not an absolute path; set \(environmentVariable) to an absolute path.")
        }
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            let code = errno
            throw .lockDirectoryUnusable(path: path, reason: "it could not be created (\(String(cString: strerror(code)))); create it with mode 0700 or set \(environmentVariable) to a folder you own.")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            throw .lockDirectoryUnusable(path: path, reason: "it cannot be inspected (\(String(cString: strerror(code)))).")
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK {
            throw .lockDirectoryUnusable(path: path, reason: "it is a symbolic link, which another user could point at a folder of theirs; remove the link or set \(environmentVariable) to a real folder.")
        }
        guard type == S_IFDIR else {
            throw .lockDirectoryUnusable(path: path, reason: "it is not a directory; remove it or set \(environmentVariable) elsewhere.")
        }
        guard info.st_uid == geteuid() else {
            throw .lockDirectoryUnusable(path: path, reason: "it is owned by user \(info.st_uid), not by this user (\(geteuid())); another user could hold or fake our locks. Set \(environmentVariable) to a folder you own.")
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw .lockDirectoryUnusable(path: path, reason: "it is writable by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); run `chmod 700 \(path)`.")
        }
        return LockDirectory(path: path)
    }
}
