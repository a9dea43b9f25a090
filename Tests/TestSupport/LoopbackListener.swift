import Foundation
import Glibc

/// A listening TCP socket on 127.0.0.1 at a port the kernel picks, for the scripted servers of
/// the tests (``WebDAVScriptedServer``, the sync agent's raw HTTP server).
public enum LoopbackListener {
    /// Opens, binds and listens (backlog 16); returns the descriptor (close-on-exec) and the port.
    ///
    /// - Throws: ``FixtureFailure`` with the failing call's errno.
    public static func open() throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureFailure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0 && listen(fd, 16) == 0
            }
        }
        guard bound else {
            let failure = errno
            close(fd)
            throw FixtureFailure(description: "bind/listen 127.0.0.1:0: errno \(failure)")
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
