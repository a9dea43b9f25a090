import Foundation
import Glibc

/// The paths involved in one save: the target (with a symbolic link at the target resolved), its
/// folder, and a fresh temporary name beside it. Internal; any thread.
struct SavePaths {
    /// The URL the caller asked for, used in errors.
    let url: URL
    /// The path that will be replaced. If the caller's path is a symbolic link that resolves, this
    /// is the file it points to, so the link is kept and keeps pointing at the new contents.
    let target: String
    /// The folder containing `target`.
    let folder: String
    /// A new, unused-looking name in `folder`: `.<name>.cdsave-<12 hex digits>`.
    let temporary: String
    /// The key of injected test failures (``SafeSave/injectionKey(_:)``).
    let injectionKey: String

    init(for url: URL) throws(DocumentError) {
        guard url.isFileURL else {
            throw .saveFailed(url, reason: "“\(url.absoluteString)” is not a file URL", errno: nil)
        }
        var target = url.standardizedFileURL.path
        while target.count > 1 && target.hasSuffix("/") { target.removeLast() }
        var linkInfo = stat()
        if lstat(target, &linkInfo) == 0, linkInfo.st_mode & S_IFMT == S_IFLNK,
           let resolved = POSIX.resolvedPath(target) {
            target = resolved
        }
        let name = (target as NSString).lastPathComponent
        guard !name.isEmpty, name != "/", name != ".", name != ".." else {
            throw .saveFailed(url, reason: "“\(url.path)” does not name a file", errno: nil)
        }
        self.url = url
        self.target = target
        self.folder = (target as NSString).deletingLastPathComponent
        self.temporary = Self.siblingName(of: target, marker: "cdsave")
        self.injectionKey = SafeSave.injectionKey(url)
    }

    /// A hidden name beside `path`: `.<name>.<marker>-<random>`, with the name shortened (at a
    /// character boundary) so the whole stays within the 255-byte limit of file names.
    static func siblingName(of path: String, marker: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        var name = (path as NSString).lastPathComponent
        let random = String(UInt64.random(in: 0...UInt64.max) & 0xFFFF_FFFF_FFFF, radix: 16)
        let suffix = ".\(marker)-" + String(repeating: "0", count: 12 - random.count) + random
        while 1 + name.utf8.count + suffix.utf8.count > 255 { name.removeLast() }
        return (folder == "/" ? "" : folder) + "/." + name + suffix
    }
}
