import Foundation
import Glibc
import Synchronization
import SystemSupport

/// The private, per-user directory that holds the lock files.
///
/// Every process of one user must find the *same* directory, whatever its environment (a login
/// shell, cron, ssh, `sudo -u`, a systemd service), so it is derived only from the effective user
/// id and what exists on disk — never from `XDG_RUNTIME_DIR` or `TMPDIR`:
/// 1. `$CLOUDDOCUMENTS_LOCK_DIR`, when set: an explicit override that every cooperating process
///    must then set to the same folder;
/// 2. `/run/user/<uid>/clouddocuments`, when `/run/user/<uid>` is a real directory (not a link)
///    owned by the user;
/// 3. `/tmp/clouddocuments-<uid>` otherwise.
///
/// It is created with mode 0700 when missing, and refused when it (its real final component —
/// `link/.` and `link//` name the link itself) is a symbolic link, is not a directory, is owned by
/// another user, or grants group or others any access — each of those would let another user see
/// every coordinated path, or hold or fake our locks.
struct LockDirectory: Sendable, Equatable {
    let path: String

    static let environmentVariable = "CLOUDDOCUMENTS_LOCK_DIR"

    /// The lock directory of the process default runtime (`CoordinationRuntime.process`, and any
    /// runtime made without a directory of its own), validated once and then cached (decided at
    /// the first coordination).
    static func current() throws(CoordinationError) -> LockDirectory {
        try resolvedOnce.get()
    }
    private static let resolvedOnce = Result<LockDirectory, CoordinationError> { () throws(CoordinationError) in
        try resolve(environment: ProcessInfo.processInfo.environment)
    }

    /// Picks, creates and validates the lock directory. Only `CLOUDDOCUMENTS_LOCK_DIR` is read
    /// from `environment`; `runtimeRoot` and `temporaryRoot` are parameters for tests.
    static func resolve(
        environment: [String: String], uid: uid_t = geteuid(),
        runtimeRoot: String = "/run/user", temporaryRoot: String = "/tmp"
    ) throws(CoordinationError) -> LockDirectory {
        if let explicit = environment[environmentVariable], !explicit.isEmpty {
            return try validate(explicit, uid: uid)
        }
        let runtime = runtimeRoot + "/\(uid)"
        if isOwnedDirectory(runtime, uid: uid) {
            return try validate(runtime + "/clouddocuments", uid: uid)
        }
        return try validate(temporaryRoot + "/clouddocuments-\(uid)", uid: uid)
    }

    /// True when `path` itself (not a link to it) is a directory owned by `uid`.
    private static func isOwnedDirectory(_ path: String, uid: uid_t) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == uid
    }

    /// Creates `path` (mode 0700) if missing, then checks it is safe to use. Returns it with its
    /// parent resolved (`realpath`) and its final component exactly as named.
    static func validate(_ path: String, uid: uid_t = geteuid()) throws(CoordinationError) -> LockDirectory {
        let path = try normalised(path)
        if mkdir(path, 0o700) == 0 {
            // Made by us: make sure of the mode whatever the umask.
            chmod(path, 0o700)
        } else if errno != EEXIST {
            let code = errno
            throw .lockDirectoryUnusable(path: path, reason: "it could not be created (\(Errno(rawValue: code).message)); create it with mode 0700 or set \(environmentVariable) to a folder you own.")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            throw .lockDirectoryUnusable(path: path, reason: "it cannot be inspected (\(Errno(rawValue: code).message)).")
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK {
            throw .lockDirectoryUnusable(path: path, reason: "it is a symbolic link, which another user could point at a folder of theirs; remove the link or set \(environmentVariable) to a real folder.")
        }
        guard type == S_IFDIR else {
            throw .lockDirectoryUnusable(path: path, reason: "it is not a directory; remove it or set \(environmentVariable) elsewhere.")
        }
        guard info.st_uid == uid else {
            throw .lockDirectoryUnusable(path: path, reason: "it is owned by user \(info.st_uid), not by this user (\(uid)); another user could hold or fake our locks. Set \(environmentVariable) to a folder you own.")
        }
        guard info.st_mode & 0o077 == 0 else {
            let mode = String(info.st_mode & 0o777, radix: 8)
            let what = info.st_mode & (S_IWGRP | S_IWOTH) != 0
                ? "writable by group or others" : "readable by group or others, who would see every coordinated path"
            throw .lockDirectoryUnusable(path: path, reason: "it is \(what) (mode \(mode)); run `chmod 700 \(path)`.")
        }
        return LockDirectory(path: path)
    }

    /// The absolute path with its parent resolved by the kernel (`realpath`) and its real final
    /// component: empty components and `.` are dropped, so `link/.` and `link//` name `link`. A
    /// final `..` is refused (it cannot name a folder we would create).
    private static func normalised(_ path: String) throws(CoordinationError) -> String {
        guard path.hasPrefix("/") else {
            throw .lockDirectoryUnusable(path: path, reason: "it is not an absolute path; set \(environmentVariable) to an absolute path.")
        }
        let components = path.split(separator: "/").filter { $0 != "." }
        guard let last = components.last else {
            throw .lockDirectoryUnusable(path: path, reason: "it is the root folder; set \(environmentVariable) to a folder of its own.")
        }
        guard last != ".." else {
            throw .lockDirectoryUnusable(path: path, reason: "it ends in `..`; name the folder itself.")
        }
        let parent = "/" + components.dropLast().joined(separator: "/")
        guard let resolved = realpath(parent, nil) else {
            let code = errno
            throw .lockDirectoryUnusable(path: path, reason: "its parent folder cannot be resolved (\(Errno(rawValue: code).message)); create it first.")
        }
        defer { free(resolved) }
        let parentPath = String(cString: resolved)
        return (parentPath == "/" ? "" : parentPath) + "/" + last
    }
}
