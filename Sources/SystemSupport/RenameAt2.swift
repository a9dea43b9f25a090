import Glibc

/// `renameat2(2)`: a rename with a flag — the one copy of the lookup shared by saving (CloudDocuments),
/// rclone bisync promotion (FileCoordination) and moves into and out of containers (Ubiquity).
/// Any thread. Paths are lossless path strings (`PathBytes`).
package enum RenameAt2 {
    /// Flags of `renameat2(2)` (from `<linux/fs.h>`; not exported by the Glibc module).
    package enum Flag: UInt32, Sendable {
        /// Fail with EEXIST if the destination exists.
        case noReplace = 1
        /// Swap source and destination atomically; both must exist.
        case exchange = 2
    }

    private typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32

    /// glibc's `renameat2` wrapper (glibc 2.28+). The Glibc module does not import it, and
    /// `syscall(2)` is variadic and so not callable from Swift; it is looked up once.
    private static let function: Function? = {
        guard let symbol = dlsym(nil, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }()

    /// Renames `source` to `destination` with `flag`, retrying on EINTR. Fails with ENOSYS when the
    /// C library lacks the call; file systems that lack the flag answer EINVAL
    /// (``isUnsupported(_:)`` says whether to fall back).
    package static func rename(_ source: String, to destination: String, flag: Flag) -> Result<Void, Errno> {
        guard let function else { return .failure(Errno(rawValue: ENOSYS)) }
        return PathBytes.withCString(source) { from in
            PathBytes.withCString(destination) { to in
                valueOrErrno { function(AT_FDCWD, from, AT_FDCWD, to, flag.rawValue) }.map { _ in () }
            }
        }
    }

    /// Whether a failure means "this kernel, C library or file system does not support the flag"
    /// rather than a real failure.
    package static func isUnsupported(_ error: Errno) -> Bool {
        error.rawValue == EINVAL || error.rawValue == ENOSYS || error.rawValue == EOPNOTSUPP
    }
}
