import Foundation
import Glibc
import SystemSupport

/// The paths involved in one save: the target (with a symbolic link at the target resolved), its
/// folder, and a fresh temporary name beside it. Each is a `SystemPath` (`targetPath`, …), what
/// the system calls of a save take, and a lossless path string (`target`, …; SystemSupport's
/// `PathBytes`) for keys, messages and the callers not yet moved to `SystemPath`: a name that is
/// not valid UTF-8 is saved under its own bytes. Internal; any thread.
///
/// The target is where the kernel resolves the caller's path: symbolic links in the folder's
/// components are resolved *before* a `..` after them applies (with `D/lnk -> D/real/sub`,
/// `D/lnk/../x.txt` is `D/real/x.txt`, not `D/x.txt`), so that the file saved is the one a later
/// `open` of the same URL reads, and the one the coordinated write lock names.
struct SavePaths {
    /// The URL the caller asked for, used in errors.
    let url: URL
    /// The path that will be replaced. If the caller's path is a symbolic link that resolves, this
    /// is the file it points to, so the link is kept and keeps pointing at the new contents.
    let targetPath: SystemPath
    /// The folder containing `target`.
    let folderPath: SystemPath
    /// A new, unused-looking name in `folder`: `.<name>.cdsave-<12 hex digits>`.
    let temporaryPath: SystemPath
    /// ``targetPath`` as a lossless path string.
    var target: String { targetPath.lossless }
    /// ``folderPath`` as a lossless path string.
    var folder: String { folderPath.lossless }
    /// ``temporaryPath`` as a lossless path string.
    var temporary: String { temporaryPath.lossless }
    /// The key of injected test failures (``SafeSave/injectionKey(_:)``); empty when no failure
    /// was registered as the save began (computing the key costs microseconds).
    let injectionKey: String
    /// What `lstat` found at `target`, when that is the status a save needs (see ``targetStatus()``).
    private let knownStatus: KnownStatus

    private enum KnownStatus {
        /// Nothing is at `target`.
        case missing
        /// `target` is not a symbolic link: its `lstat` is its `stat`.
        case found(stat)
        /// `target` was reached through a link, or `lstat` failed: `stat` it.
        case unknown
    }

    init(for url: URL) throws(DocumentError) {
        guard url.isFileURL else {
            throw .saveFailed(url, reason: "“\(url.absoluteString)” is not a file URL", errno: nil)
        }
        var path = PathBytes.path(of: url)
        while path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") { path.removeLast() }
        let (givenFolder, name) = Self.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw .saveFailed(url, reason: "“\(PathBytes.display(path))” does not name a file", errno: nil)
        }
        var target = Self.join(Self.resolvedFolder(givenFolder), name)
        var known = KnownStatus.unknown
        switch Result(catching: { () throws(SystemCallError) in try POSIX.linkStatus(SystemPath(lossless: target)) }) {
        case .success(nil):
            known = .missing
        case .success(let link?) where link.st_mode & S_IFMT == S_IFLNK:
            if let resolved = POSIX.resolvedPath(SystemPath(lossless: target)) { target = resolved.lossless }
        case .success(let info?):
            known = .found(info)
        case .failure:
            break  // `stat` reports it.
        }
        self.url = url
        self.targetPath = SystemPath(lossless: target)
        self.knownStatus = known
        self.folderPath = SystemPath(lossless: Self.split(target).folder)
        self.temporaryPath = SystemPath(lossless: Self.siblingName(of: target, marker: "cdsave"))
        self.injectionKey = SafeSave.failuresAreInjected ? SafeSave.injectionKey(url) : ""
    }

    /// The status of what is at `target`, following a symbolic link (`nil`: nothing there; a
    /// dangling link counts as nothing). Reuses the `lstat` made while resolving the paths when
    /// `target` is not a link.
    ///
    /// - Throws: The `stat` error other than ENOENT.
    func targetStatus() throws(SystemCallError) -> stat? {
        switch knownStatus {
        case .missing: return nil
        case .found(let info): return info
        case .unknown: return try POSIX.status(targetPath)
        }
    }

    /// The folder as the kernel resolves it (`realpath`: links, then `..`). An absolute path
    /// without `.`, `..` or empty components is kept as given: the kernel reaches the same folder
    /// through it (its links resolve alike either way), and `realpath` would cost a `readlink` per
    /// component. A folder that cannot be resolved (it is missing, or not searchable) keeps its
    /// given path, with `.`, `..` and `//` removed as text; the save then fails on it with the
    /// kernel's error.
    private static func resolvedFolder(_ folder: String) -> String {
        if isPlainAbsolute(folder) { return folder }
        if case .success(let resolved) = PathBytes.realPath(folder) { return resolved }
        var parts: [String] = []
        for bytes in folder.utf8.split(separator: UInt8(ascii: "/")) {
            let component = String(Substring(bytes))
            if component == "." { continue }
            if component == ".." { if !parts.isEmpty { parts.removeLast() } } else { parts.append(component) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether `path` starts with `/` and has no empty, `.` or `..` component (`/` itself is
    /// plain).
    static func isPlainAbsolute(_ path: String) -> Bool {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        // One pass, no allocation: the length of the current component and how many of its
        // bytes are dots (a component of one or two bytes that are all dots is `.` or `..`).
        var length = 0, dots = 0
        func isPlain() -> Bool { length > 0 && !(length <= 2 && dots == length) }
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                guard isPlain() else { return false }
                length = 0
                dots = 0
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return isPlain()
    }

    /// `path`'s folder and last component, split at the last `/` byte ("/" for a name at the
    /// root).
    static func split(_ path: String) -> (folder: String, name: String) {
        let utf8 = path.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("/", path) }
        let folder = slash == utf8.startIndex ? "/" : String(Substring(utf8[..<slash]))
        return (folder, String(Substring(utf8[utf8.index(after: slash)...])))
    }

    static func join(_ folder: String, _ name: String) -> String {
        folder == "/" ? "/" + name : folder + "/" + name
    }

    /// A hidden name beside `path`: `.<name>.<marker>-<random>`, with the name shortened (at a
    /// character boundary) so that its bytes on disk stay within the 255-byte limit of file names.
    static func siblingName(of path: String, marker: String) -> String {
        let (folder, fullName) = split(path)
        let suffix = TemporaryNameSuffix.make(marker: marker)
        // Within the limit as text, so within it on disk (a byte that is not UTF-8 takes more
        // room in the text than on disk).
        if 1 + fullName.utf8.count + suffix.utf8.count <= 255 { return join(folder, "." + fullName + suffix) }
        var name = fullName.unicodeScalars
        while 1 + PathBytes.bytes(of: String(name)).count + suffix.utf8.count > 255 {
            name.removeLast()
            // A byte that is not UTF-8 is two scalars (NUL, then the byte): drop them together.
            if name.last == "\u{0}" { name.removeLast() }
        }
        return join(folder, "." + String(name) + suffix)
    }
}
