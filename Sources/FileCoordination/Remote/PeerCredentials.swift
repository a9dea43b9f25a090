import Glibc

/// Who is at the other end of a Unix socket, as the kernel recorded it when the connection was
/// made (`SO_PEERCRED`): it cannot be forged by the peer.
struct PeerCredentials: Equatable, Sendable {
    let pid: Int32
    let uid: UInt32
    let gid: UInt32

    /// Linux's `struct ucred` (not exported to Swift by Glibc): three 32-bit fields.
    private struct UCred {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    /// The credentials of the peer of the connected socket `fd`, or nil when they cannot be read.
    static func of(socket fd: Int32) -> PeerCredentials? {
        var credentials = UCred()
        var length = socklen_t(MemoryLayout<UCred>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              length == socklen_t(MemoryLayout<UCred>.size) else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// Only a process of the same user may talk to us: `.success` when the peer of `fd` runs as
    /// `uid` (this process's effective user by default), else `.refusedPeer` with its uid (or a
    /// system error when the credentials cannot be read — also a refusal).
    static func check(socket fd: Int32, expectedUID uid: uid_t = geteuid()) -> Result<PeerCredentials, RemoteTransportError> {
        guard let credentials = of(socket: fd) else { return .failure(.system(call: "getsockopt(SO_PEERCRED)", errno: errno)) }
        guard credentials.uid == uid else { return .failure(.refusedPeer(uid: credentials.uid)) }
        return .success(credentials)
    }
}
