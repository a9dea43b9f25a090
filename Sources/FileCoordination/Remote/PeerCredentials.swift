import CSystemShim
import Glibc

/// Who is at the other end of a Unix socket, as the kernel recorded it when the connection was
/// made (`SO_PEERCRED`): it cannot be forged by the peer.
struct PeerCredentials: Equatable, Sendable {
    let pid: Int32
    let uid: UInt32
    let gid: UInt32

    /// The credentials of the peer of the connected socket `fd` (`SO_PEERCRED`, read by
    /// CSystemShim: the Glibc module declares `struct ucred` only with `_GNU_SOURCE`), or nil
    /// when they cannot be read (`errno` says why).
    static func of(socket fd: Int32) -> PeerCredentials? {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        guard cshim_peer_credentials(fd, &pid, &uid, &gid) == 0 else { return nil }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
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
