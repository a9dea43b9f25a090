import Foundation
import Glibc
import Testing
import TestSupport
@testable import CloudDocuments

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

