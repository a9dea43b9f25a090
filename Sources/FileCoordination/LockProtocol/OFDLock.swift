import CSystemShim
import Glibc

/// Thin, honest wrappers over Linux open-file-description (OFD) locks: `fcntl` with
/// `F_OFD_SETLK`, `F_OFD_SETLKW` and `F_OFD_GETLK`.
///
/// OFD locks belong to an *open file description* (one `open` call), not to a process: two
/// descriptors from two `open` calls conflict even inside one process, closing an unrelated
/// descriptor never drops them, and the kernel drops them when the last descriptor of the
/// description closes — including when the process is killed. Classic `F_SETLK` locks have none
/// of these properties and are never used here.
///
/// The `fcntl` commands come from CSystemShim (`CSHIM_F_OFD_*`: the Glibc module declares them
/// only with `_GNU_SOURCE`; the shim checks its values against glibc's when it is compiled).
package enum OFDLock {
    package enum Kind {
        case shared, exclusive, unlock
        var raw: Int16 {
            switch self {
            case .shared: return Int16(F_RDLCK)
            case .exclusive: return Int16(F_WRLCK)
            case .unlock: return Int16(F_UNLCK)
            }
        }
    }

    /// The result of one lock request.
    package enum Outcome: Equatable {
        case done
        /// Non-blocking request refused: someone else holds a conflicting lock.
        case wouldBlock
        /// Blocking request interrupted by a signal (see `KernelWaitInterrupter`).
        case interrupted
        case failed(Int32)
    }

    /// Locks (or unlocks) bytes `[start, start + length)` of `fd`; `length == 0` means "to the end
    /// of all possible offsets". When `wait` is true, sleeps in the kernel until granted or
    /// interrupted by a signal.
    @inline(__always)
    package static func apply(_ kind: Kind, fd: Int32, start: Int, length: Int, wait: Bool) -> Outcome {
        var request = Self.request(kind, start: start, length: length)
        if fcntl(fd, wait ? CSHIM_F_OFD_SETLKW : CSHIM_F_OFD_SETLK, &request) == 0 { return .done }
        let code = errno
        switch code {
        case EAGAIN, EACCES: return .wouldBlock
        case EINTR: return .interrupted
        default: return .failed(code)
        }
    }

    /// The `flock` record for `kind` on bytes `[start, start + length)` (`l_pid` 0, as OFD locks require).
    @inline(__always)
    private static func request(_ kind: Kind, start: Int, length: Int) -> flock {
        var request = flock()
        request.l_type = kind.raw
        request.l_whence = Int16(SEEK_SET)
        request.l_start = start
        request.l_len = length
        request.l_pid = 0
        return request
    }

    /// True when some other open file description holds a lock that conflicts with `kind` on the
    /// byte range (a test only: nothing is locked).
    package static func isContended(_ kind: Kind, fd: Int32, start: Int, length: Int) -> Bool {
        var request = Self.request(kind, start: start, length: length)
        guard fcntl(fd, CSHIM_F_OFD_GETLK, &request) == 0 else { return false }
        return request.l_type != Int16(F_UNLCK)
    }
}
