import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

/// Makes a fresh folder under the system temp directory, named `prefix` and a random suffix.
func makeTemporaryFolder(prefix: String) throws -> URL {
    let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("\(prefix)-XXXXXX").path
    var template = Array(base.utf8CString)
    guard let made = mkdtemp(&template) else {
        throw DocumentError.saveFailed(URL(fileURLWithPath: NSTemporaryDirectory()), reason: "mkdtemp failed", errno: errno)
    }
    return URL(fileURLWithPath: String(cString: made), isDirectory: true)
}

/// A fresh folder under the system temp directory, removed (with everything in it) when `body`
/// returns or throws.
func withTemporaryFolder<Result>(_ body: (URL) throws -> Result) throws -> Result {
    let url = try makeTemporaryFolder(prefix: "clouddocs-test")
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

/// Writes the file `name` holding `text` into `folder` (without SafeSave) and returns its URL.
func makeFile(_ name: String, containing text: String, in folder: URL) throws -> URL {
    let url = folder.appendingPathComponent(name)
    try put(text, at: url)
    return url
}

/// Runs `body` with a save failure injected at `step` for saves to `target` (firing after `passes`
/// steps that pass), and removes whatever is left of it when `body` returns or throws.
@discardableResult
func withInjectedFailure<Result>(at step: SafeSave.FailurePoint, errno code: Int32 = EIO, after passes: Int = 0,
                                 forTarget target: URL, _ body: () throws -> Result) throws -> Result {
    SafeSave.injectFailure(at: step, errno: code, after: passes, forTarget: target)
    defer { SafeSave.removeInjectedFailures(forTarget: target) }
    return try body()
}

/// The bytes of a file as text, or nil when it cannot be read.
func text(at url: URL) -> String? {
    (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
}

/// Checks that `file` holds `expected` and is the only item in its folder (no temporary file left).
func expectOnlyFile(_ file: URL, holding expected: String, _ comment: Comment? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(text(at: file) == expected, sourceLocation: sourceLocation)
    #expect(listing(file.deletingLastPathComponent()) == [file.lastPathComponent], comment, sourceLocation: sourceLocation)
}

/// Mounting a small tmpfs, to get a really full or really read-only file system. Needs root
/// with CAP_SYS_ADMIN (tests that use it are disabled with a message when it is not available).
enum TmpfsMount {
    static var isAvailable: Bool { SmallTmpfs.isAvailable }

    /// The message shown when mount tests are disabled.
    static let unavailableMessage = Comment(rawValue: SmallTmpfs.unavailableMessage)

    /// Mounts a tmpfs of `size` (e.g. "64k") on a new folder and runs `body` with it; always
    /// unmounts (lazily, so a stray open descriptor cannot keep it) and removes the folder.
    static func withMount<Result>(size: String, _ body: (URL) throws -> Result) throws -> Result {
        try withTemporaryFolder { outer in
            let point = try mount(size: size, inside: outer)
            defer { unmount(point) }
            return try body(point)
        }
    }

    /// The same for async tests.
    static func withMount<Result>(size: String, _ body: (URL) async throws -> Result) async throws -> Result {
        try await withDocumentFolder { outer in
            let point = try mount(size: size, inside: outer)
            defer { unmount(point) }
            return try await body(point)
        }
    }

    private static func mount(size: String, inside outer: URL) throws -> URL {
        try SmallTmpfs.mount(size: size, inside: outer, name: "mnt")
    }

    private static func unmount(_ point: URL) { SmallTmpfs.unmount(point) }

    /// Makes a mounted tmpfs read-only.
    static func remountReadOnly(_ point: URL) throws { try SmallTmpfs.remountReadOnly(point) }
}
