import Foundation
import Glibc

/// A small tmpfs mounted for a test: a really full, really read-only or really other file system.
/// The one tmpfs helper of every test target. Needs root with CAP_SYS_ADMIN; tests that need it
/// are enabled with
/// `.enabled(if: SmallTmpfs.isAvailable, Comment(rawValue: SmallTmpfs.unavailableMessage))` and
/// so are skipped, with the message, where `mount(2)` is refused.
public enum SmallTmpfs {
    /// Whether mounting works here: tried once, on a scratch folder.
    public static let isAvailable: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-probe-\(UUID().uuidString)").path
        guard mkdir(probe, 0o700) == 0 else { return false }
        defer { rmdir(probe) }
        guard Glibc.mount("tmpfs", probe, "tmpfs", 0, "size=16k") == 0 else { return false }
        _ = umount2(probe, Int32(MNT_DETACH))
        return true
    }()

    /// Why the tests that need a tmpfs are skipped.
    public static let unavailableMessage =
        "mounting a tmpfs needs root with CAP_SYS_ADMIN (mount(2) was refused here): the full-disk, read-only and cross-file-system cases cannot be made"

    /// Why mounting failed.
    public struct MountFailed: Error, CustomStringConvertible {
        public let path: String
        public let errno: Int32
        public var description: String { "mounting a tmpfs on \(path) failed: errno \(errno)" }
    }

    /// Mounts a tmpfs of `size` (e.g. "64k") on a new folder `name` in `outer`; returns it.
    public static func mount(size: String, inside outer: URL, name: String = "tmpfs") throws -> URL {
        let point = outer.appendingPathComponent(name, isDirectory: true)
        guard mkdir(point.path, 0o755) == 0 else { throw MountFailed(path: point.path, errno: errno) }
        guard Glibc.mount("tmpfs", point.path, "tmpfs", 0, "size=\(size),mode=0755") == 0 else {
            let error = errno
            rmdir(point.path)
            throw MountFailed(path: point.path, errno: error)
        }
        return point
    }

    /// Unmounts lazily (a stray open descriptor cannot keep the mount) and removes the folder.
    public static func unmount(_ point: URL) {
        _ = umount2(point.path, Int32(MNT_DETACH))
        rmdir(point.path)
    }

    /// Makes a mounted tmpfs read-only.
    public static func remountReadOnly(_ point: URL) throws {
        guard Glibc.mount("tmpfs", point.path, "tmpfs", UInt(MS_REMOUNT) | UInt(MS_RDONLY), nil) == 0 else {
            throw MountFailed(path: point.path, errno: errno)
        }
    }

    /// Runs `body` with a tmpfs of `size` mounted in `outer`; always unmounts.
    public static func withMount<Result>(size: String, inside outer: URL, _ body: (URL) throws -> Result) throws -> Result {
        let point = try mount(size: size, inside: outer)
        defer { unmount(point) }
        return try body(point)
    }

    /// Runs `body` with a tmpfs of `size` mounted on a new folder in a fresh ``Scratch`` folder;
    /// always unmounts and removes both.
    public static func withMount<Result>(size: String, _ body: (URL) throws -> Result) throws -> Result {
        try Scratch.with("clouddocs-tmpfs") { outer in try withMount(size: size, inside: outer, body) }
    }

    /// The same for async code (`body` runs in the caller's isolation).
    public static func withMount<Result>(size: String, isolation: isolated (any Actor)? = #isolation,
                                         _ body: (URL) async throws -> Result) async throws -> Result {
        try await Scratch.with("clouddocs-tmpfs") { outer in
            let point = try mount(size: size, inside: outer)
            defer { unmount(point) }
            return try await body(point)
        }
    }
}
