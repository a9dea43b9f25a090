import CSystemShim
import Glibc

/// `renameat2(2)`: a rename with a flag — the one copy shared by saving (CloudDocuments), rclone
/// bisync promotion (FileCoordination) and moves into and out of containers (Ubiquity), through
/// CSystemShim's `cshim_renameat2`. Any thread. Paths are lossless path strings (`PathBytes`).
package enum RenameAt2 {
    /// Flags of `renameat2(2)`.
    package enum Flag: Sendable {
        /// Fail with EEXIST if the destination exists.
        case noReplace
        /// Swap source and destination atomically; both must exist.
        case exchange

        /// The value the kernel takes (CSystemShim's `CSHIM_RENAME_*`, checked against glibc's).
        var rawFlag: UInt32 {
            switch self {
            case .noReplace: return CSHIM_RENAME_NOREPLACE
            case .exchange: return CSHIM_RENAME_EXCHANGE
            }
        }
    }

    /// Renames `source` to `destination` with `flag`, retrying on EINTR. Fails with ENOSYS when the
    /// kernel lacks the call (before Linux 3.15); file systems that lack the flag answer EINVAL
    /// (``isUnsupported(_:)`` says whether to fall back).
    package static func rename(_ source: String, to destination: String, flag: Flag) -> Result<Void, Errno> {
        PathBytes.withCString(source) { from in
            PathBytes.withCString(destination) { to in
                valueOrErrno { cshim_renameat2(AT_FDCWD, from, AT_FDCWD, to, flag.rawFlag) }.map { _ in () }
            }
        }
    }

    /// Whether a failure means "this kernel, C library or file system does not support the flag"
    /// rather than a real failure.
    package static func isUnsupported(_ error: Errno) -> Bool {
        error.rawValue == EINVAL || error.rawValue == ENOSYS || error.rawValue == EOPNOTSUPP
    }
}
