import Foundation
import Glibc
import Testing
@testable import CloudDocuments

/// A fresh folder under the system temp directory, removed (with everything in it) when `body`
/// returns or throws.
func withTemporaryFolder<Result>(_ body: (URL) throws -> Result) throws -> Result {
    var template = Array((NSTemporaryDirectory() + "/clouddocs-test-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
        throw DocumentError.saveFailed(URL(fileURLWithPath: NSTemporaryDirectory()), reason: "mkdtemp failed", errno: errno)
    }
    let url = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    defer { POSIX.removeTree(url.path) }
    return try body(url)
}

/// The names in a folder, sorted, hidden ones included (temporary files are hidden).
func listing(_ folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
}

/// The permission bits of the item at `url` (not following a final link), or nil.
func permissions(_ url: URL) -> mode_t? {
    var info = stat()
    guard lstat(url.path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}

/// Writes bytes without SafeSave, for test setup.
func put(_ text: String, at url: URL) throws {
    try Data(text.utf8).write(to: url)
}

/// The bytes of a file as text, or nil when it cannot be read.
func text(at url: URL) -> String? {
    (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
}

/// Mounting a small tmpfs, to get a really full or really read-only file system. Needs root
/// with CAP_SYS_ADMIN (tests that use it are disabled with a message when it is not available).
enum TmpfsMount {
    /// Whether mounting works here: tried once, on a scratch folder.
    static let isAvailable: Bool = {
        var template = Array((NSTemporaryDirectory() + "/clouddocs-mountprobe-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { return false }
        let path = String(cString: made)
        defer { rmdir(path) }
        guard Glibc.mount("tmpfs", path, "tmpfs", 0, "size=16k") == 0 else { return false }
        _ = umount2(path, Int32(MNT_DETACH))
        return true
    }()

    /// The message shown when mount tests are disabled.
    static let unavailableMessage: Comment =
        "mounting a tmpfs needs root with CAP_SYS_ADMIN (mount(2) was refused); the injected-failure tests cover the same error paths"

    /// Mounts a tmpfs of `size` (e.g. "64k") on a new folder and runs `body` with it; always
    /// unmounts (lazily, so a stray open descriptor cannot keep it) and removes the folder.
    static func withMount<Result>(size: String, _ body: (URL) throws -> Result) throws -> Result {
        try withTemporaryFolder { outer in
            let point = outer.appendingPathComponent("mnt", isDirectory: true)
            guard mkdir(point.path, 0o755) == 0 else {
                throw DocumentError.saveFailed(point, reason: "mkdir failed", errno: errno)
            }
            guard Glibc.mount("tmpfs", point.path, "tmpfs", 0, "size=\(size),mode=0755") == 0 else {
                throw DocumentError.saveFailed(point, reason: "mount failed", errno: errno)
            }
            defer { _ = umount2(point.path, Int32(MNT_DETACH)) }
            return try body(point)
        }
    }

    /// Makes a mounted tmpfs read-only.
    static func remountReadOnly(_ point: URL) throws {
        guard Glibc.mount("tmpfs", point.path, "tmpfs", UInt(MS_REMOUNT) | UInt(MS_RDONLY), nil) == 0 else {
            throw DocumentError.saveFailed(point, reason: "remount read-only failed", errno: errno)
        }
    }
}
