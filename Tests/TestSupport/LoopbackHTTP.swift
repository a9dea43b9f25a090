import Foundation
import Glibc

/// A minimal blocking HTTP/1.0 client for servers the tests start on 127.0.0.1 (Syncthing's REST
/// API). One request per connection; the server closes it after the answer, so the body is
/// everything after the header (no chunked encoding with HTTP/1.0). Kept here rather than using
/// URLSession so that the fixtures need nothing beyond Glibc and have plain timeouts.
public enum LoopbackHTTP {
    public struct Response: Sendable {
        public let status: Int
        public let body: Data

        /// The body parsed as JSON, or nil.
        public var json: Any? { try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends one request to `127.0.0.1:port` and returns the answer. Throws ``Failure`` when the
    /// connection fails or no complete answer arrives within `timeout` seconds.
    public static func request(port: UInt16, method: String, path: String, headers: [String: String] = [:],
                               body: Data? = nil, timeout: Double = 10) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }

        var head = "\(method) \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var outgoing = Array(head.utf8) + Array(body ?? Data())
        var sent = 0
        while sent < outgoing.count {
            let count = outgoing.withUnsafeMutableBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure(description: "send to 127.0.0.1:\(port): errno \(errno)") }
            sent += count
        }

        var incoming: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw Failure(description: "\(method) \(path) on 127.0.0.1:\(port): no complete answer (errno \(errno))")
            }
            incoming += chunk[..<count]
        }
        outgoing.removeAll()
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = incoming.indices.first(where: { incoming[$0...].starts(with: separator) }) else {
            throw Failure(description: "\(method) \(path) on 127.0.0.1:\(port): answer without header end")
        }
        let statusLine = String(decoding: incoming[..<end], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, let status = Int(fields[1]) else {
            throw Failure(description: "\(method) \(path) on 127.0.0.1:\(port): bad status line \(statusLine)")
        }
        return Response(status: status, body: Data(incoming[(end + 4)...]))
    }

    /// `count` distinct TCP ports on 127.0.0.1 that were free a moment ago: the kernel picks them
    /// (bind to port 0), and all are held until all are picked, so they differ from each other.
    /// Another program could take one before the caller binds it; the kernel's ephemeral choice
    /// makes that (and clashes between tests running in parallel) unlikely.
    public static func freePorts(_ count: Int) throws -> [UInt16] {
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        var ports: [UInt16] = []
        for _ in 0..<count {
            // Each kept bound until all are chosen, so the kernel picks different ports.
            let (fd, port) = try LoopbackListener.boundSocket()
            sockets.append(fd)
            ports.append(port)
        }
        return ports
    }
}
