import Foundation
import Glibc

/// A fresh folder for one test, under the system temporary folder (`TMPDIR`), named `<label>-XXXXXX`
/// (`mkdtemp`, so two tests never share one). The one scratch-folder helper of every test target.
///
/// Removed, with everything in it, by ``remove()`` (idempotent) or at the latest when the object
/// goes away. Swift may end an object's life right after its last use, so a test that only reads
/// ``url`` once should use ``with(_:_:)`` (sync or async), or `defer { scratch.remove() }`, rather
/// than rely on the end of its scope.
///
///     let scratch = try Scratch()
///     let file = scratch.file("doc.txt", contents: "x")
///
///     try await Scratch.with("notes") { folder in … }
public final class Scratch: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "clouddocs-test") throws {
        let template = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("\(label)-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: template,
                                                          NSUnderlyingErrorKey: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)])
        }
        url = URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    deinit { remove() }

    /// Removes the folder and everything in it, names that are not UTF-8 included.
    public func remove() {
        Self.removeTree(path)
    }

    /// Removes `path` and, if it is a folder, everything in it, by the names' bytes (plain C calls:
    /// the fixtures do not depend on the code under test). Ignores what cannot be removed.
    public static func removeTree(_ path: String) {
        let parent = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else { return }
        defer { close(parent) }
        removeEntry(Array((path as NSString).lastPathComponent.utf8CString), in: parent)
    }

    private static func removeEntry(_ name: [CChar], in parent: Int32) {
        if unlinkat(parent, name, 0) == 0 || errno == ENOENT { return }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        fchmod(fd, 0o700)   // a test may have made it unwritable
        if let stream = fdopendir(dup(fd)) {
            var names: [[CChar]] = []
            while let entry = readdir(stream) {
                let child = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix(while: { $0 != 0 })) }
                if child != [0x2E] && child != [0x2E, 0x2E] { names.append(child.map { CChar(bitPattern: $0) } + [0]) }
            }
            closedir(stream)
            for child in names { removeEntry(child, in: fd) }
        }
        close(fd)
        unlinkat(parent, name, AT_REMOVEDIR)
    }

    /// The URL of `name` (a relative path) in the folder; with `contents`, the file is written
    /// first (folders on the way are created). A write that fails leaves no file, which the
    /// test then finds out.
    @discardableResult
    public func file(_ name: String, contents: String? = nil) -> URL {
        let file = url.appendingPathComponent(name)
        if let contents {
            try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? Data(contents.utf8).write(to: file)
        }
        return file
    }

    /// Creates the folder `name` (a relative path, with the folders on the way) and returns it.
    @discardableResult
    public func directory(_ name: String) throws -> URL {
        let directory = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Runs `body` with a fresh folder and removes it when `body` returns or throws.
    public static func with<Result>(_ label: String = "clouddocs-test", _ body: (URL) throws -> Result) throws -> Result {
        let scratch = try Scratch(label)
        defer { scratch.remove() }
        return try body(scratch.url)
    }

    /// The same for async code; `body` runs in the caller's isolation (the main actor for
    /// `@MainActor` tests).
    public static func with<Result>(_ label: String = "clouddocs-test", isolation: isolated (any Actor)? = #isolation,
                                    _ body: (URL) async throws -> Result) async throws -> Result {
        let scratch = try Scratch(label)
        defer { scratch.remove() }
        return try await body(scratch.url)
    }
}
