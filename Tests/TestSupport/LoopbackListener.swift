import Foundation
import Glibc

/// A listening TCP socket on 127.0.0.1 at a port the kernel picks, for the scripted servers of
/// the tests (``WebDAVScriptedServer``, the sync agent's raw HTTP server).
public enum LoopbackListener {
    /// Opens, binds and listens (backlog 16); returns the descriptor (close-on-exec) and the port.
    ///
    /// - Throws: ``FixtureFailure`` with the failing call's errno.
    public static func open() throws -> (descriptor: Int32, port: UInt16) {
        let (fd, port) = try boundSocket()
        guard listen(fd, 16) == 0 else {
            let failure = errno
            close(fd)
            throw FixtureFailure(description: "listen 127.0.0.1:\(port): errno \(failure)")
        }
        return (fd, port)
    }

    /// A TCP socket (close-on-exec) bound to 127.0.0.1 at a port the kernel picks, not listening;
    /// the caller closes it.
    ///
    /// - Throws: ``FixtureFailure`` with the failing call's errno (the socket is closed then).
    public static func boundSocket() throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureFailure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let failure = errno
            close(fd)
            throw FixtureFailure(description: "bind 127.0.0.1:0: errno \(failure)")
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Sends all of `data` on `connection` (retrying interrupted and partial sends; no SIGPIPE).
    /// Returns false when the peer is gone or the send fails.
    public static func sendAll(_ connection: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let count = send(connection, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }
}
