import Glibc

// `String` overloads of the ``POSIX`` calls, each forwarding to the ``SystemPath`` one with
// `SystemPath(lossless:)`. MIGRATION PATH: they keep callers in other modules compiling while
// those move to `SystemPath` one by one; new code passes a `SystemPath`, and once no caller uses
// an overload it is deleted. Every `String` here is a lossless path string (``PathBytes``).

extension POSIX {
    /// `open(2)` of a lossless path string (migration path).
    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemCallError) -> FileDescriptor {
        try open(SystemPath(lossless: path), flags, mode: mode)
    }

    /// `lstat(2)` of a lossless path string (migration path).
    package static func linkStatus(_ path: String) throws(SystemCallError) -> stat? {
        try linkStatus(SystemPath(lossless: path))
    }

    /// `stat(2)` of a lossless path string (migration path).
    package static func status(_ path: String) throws(SystemCallError) -> stat? {
        try status(SystemPath(lossless: path))
    }

    /// `mkdir(2)` of a lossless path string (migration path).
    package static func makeDirectory(_ path: String, mode: mode_t) throws(SystemCallError) {
        try makeDirectory(SystemPath(lossless: path), mode: mode)
    }

    /// `rename(2)` of lossless path strings (migration path).
    package static func rename(_ source: String, to destination: String) throws(SystemCallError) {
        try rename(SystemPath(lossless: source), to: SystemPath(lossless: destination))
    }

    /// `link(2)` of lossless path strings (migration path).
    package static func link(_ source: String, to destination: String) throws(SystemCallError) {
        try link(SystemPath(lossless: source), to: SystemPath(lossless: destination))
    }

    /// `unlink(2)` of a lossless path string (migration path).
    package static func unlink(_ path: String) throws(SystemCallError) {
        try unlink(SystemPath(lossless: path))
    }

    /// `unlink(2)` of a lossless path string, ignoring failure (migration path).
    package static func removeFileQuietly(_ path: String) {
        removeFileQuietly(SystemPath(lossless: path))
    }

    /// Calls `body` with the exact bytes of two lossless path strings (migration path).
    package static func withCStrings<R>(_ first: String, _ second: String,
                                        _ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> R) -> R {
        withCStrings(SystemPath(lossless: first), SystemPath(lossless: second), body)
    }

    /// `renameat2(2)` of lossless path strings (migration path).
    package static func rename(_ source: String, to destination: String, flag: RenameFlag) throws(SystemCallError) {
        try rename(SystemPath(lossless: source), to: SystemPath(lossless: destination), flag: flag)
    }

    /// Flushes the directory at a lossless path string (migration path).
    package static func syncDirectory(_ path: String) throws(SystemCallError) {
        try syncDirectory(SystemPath(lossless: path))
    }

    /// The names in the directory at a lossless path string (migration path).
    package static func directoryEntries(_ path: String) throws(SystemCallError) -> (names: [String], invalid: [String]) {
        try directoryEntries(SystemPath(lossless: path))
    }

    /// `realpath(3)` of a lossless path string, as one (migration path).
    package static func resolvedPath(_ path: String) -> String? {
        resolvedPath(SystemPath(lossless: path))?.lossless
    }

    /// Removes the file or tree at a lossless path string (migration path).
    @discardableResult
    package static func removeTree(_ path: String) -> SystemCallError? {
        removeTree(SystemPath(lossless: path))
    }
}
