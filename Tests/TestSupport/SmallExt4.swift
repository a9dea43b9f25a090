import Foundation
import Glibc

/// A small ext4 file system on a loop device, mounted for a test: a really full *local disk*
/// (a tmpfs is not one — saves there behave differently, e.g. they do not hold the file they
/// replace). Needs root, a loop device and `mkfs.ext4` (e2fsprogs); tests that need it are enabled
/// with `.enabled(if: SmallExt4.isAvailable, Comment(rawValue: SmallExt4.unavailableMessage))` and
/// so are skipped, with the message, where one cannot be made.
public enum SmallExt4 {
    static let mkfs = URL(fileURLWithPath: "/usr/sbin/mkfs.ext4")
    static let mountProgram = URL(fileURLWithPath: "/usr/bin/mount")

    /// Whether a loop-mounted ext4 can be made here: tried once.
    public static let isAvailable: Bool = {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: mkfs.path),
              FileManager.default.isExecutableFile(atPath: mountProgram.path) else { return false }
        return (try? Scratch.with("ext4-probe") { outer in try withMount(kibibytes: 1024, inside: outer) { _ in true } }) == true
    }()

    /// Why the tests that need one are skipped.
    public static let unavailableMessage =
        "a loop-mounted ext4 needs root, a loop device (/dev/loop-control) and mkfs.ext4 (apt-get install e2fsprogs mount): the nearly-full local disk cannot be made"

    /// Why making or mounting it failed.
    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `body` with an ext4 of `kibibytes` (no journal, 1 KiB blocks, no reserved blocks)
    /// mounted on a new folder in `outer`; always unmounts (lazily: a stray descriptor cannot keep
    /// it) and removes the image.
    public static func withMount<Result>(kibibytes: Int, inside outer: URL, _ body: (URL) throws -> Result) throws -> Result {
        let (image, point) = try mount(kibibytes: kibibytes, inside: outer)
        defer { unmount(image: image, point: point) }
        return try body(URL(fileURLWithPath: point, isDirectory: true))
    }

    /// Makes the image and mounts it; returns the image's and the mount point's paths.
    static func mount(kibibytes: Int, inside outer: URL) throws -> (image: String, point: String) {
        let image = outer.appendingPathComponent("ext4.img").path
        let point = outer.appendingPathComponent("ext4", isDirectory: true).path
        let descriptor = open(image, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failed(description: "creating \(image): errno \(errno)") }
        let sized = ftruncate(descriptor, off_t(kibibytes) * 1024) == 0
        close(descriptor)
        do {
            guard sized else { throw Failed(description: "sizing \(image): errno \(errno)") }
            let made = try ToolProcess.run(mkfs, ["-q", "-F", "-O", "^has_journal", "-b", "1024", "-m", "0", image])
            guard made.status == 0 else { throw Failed(description: "mkfs.ext4 failed: \(made.output)") }
            guard mkdir(point, 0o755) == 0 else { throw Failed(description: "mkdir \(point): errno \(errno)") }
            let mounted = try ToolProcess.run(mountProgram, ["-o", "loop", image, point])
            guard mounted.status == 0 else {
                rmdir(point)
                throw Failed(description: "mount -o loop failed: \(mounted.output)")
            }
        } catch {
            unlink(image)
            throw error
        }
        return (image, point)
    }

    /// Unmounts lazily (a stray descriptor cannot keep it; the loop device goes with the last
    /// user) and removes the mount point and the image.
    static func unmount(image: String, point: String) {
        _ = umount2(point, Int32(MNT_DETACH))
        rmdir(point)
        unlink(image)
    }

    /// The same for async code (`body` runs in the caller's isolation).
    public static func withMountAsync<Result>(kibibytes: Int, inside outer: URL, isolation: isolated (any Actor)? = #isolation,
                                              _ body: (URL) async throws -> Result) async throws -> Result {
        let (image, point) = try mount(kibibytes: kibibytes, inside: outer)
        defer { unmount(image: image, point: point) }
        return try await body(URL(fileURLWithPath: point, isDirectory: true))
    }

    /// Free bytes on the file system holding `folder` (for an unprivileged writer: no reserve here).
    public static func freeBytes(_ folder: URL) -> Int {
        var info = statvfs()
        guard statvfs(folder.path, &info) == 0 else { return -1 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}
