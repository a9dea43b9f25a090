import CSystemShim
import Glibc
import SystemSupport

/// Why a conversation with another process's endpoint ended without an answer.
enum RemoteTransportError: Error, Equatable, CustomStringConvertible {
    /// Nobody listens (`ECONNREFUSED`, or no socket file), or the peer closed the connection or
    /// died while we waited (end of file, `ECONNRESET`, `EPIPE`): skip it, its presenters are gone.
    case peerGone
    /// The peer belongs to another user (its `SO_PEERCRED` uid): nothing was sent.
    case refusedPeer(uid: UInt32)
    /// No answer before the caller's deadline (a stopped or overloaded peer).
    case timedOut
    /// The caller's coordination was cancelled while it waited.
    case cancelled
    /// The peer sent something that is not a valid frame; the connection was closed.
    case protocolViolation(String)
    /// A system call failed (`errno`).
    case system(call: String, errno: Int32)

    var description: String {
        switch self {
        case .peerGone: return "the peer process is gone"
        case .refusedPeer(let uid): return "the peer runs as user \(uid), not as this user"
        case .timedOut: return "the peer did not answer in time"
        case .cancelled: return "cancelled"
        case .protocolViolation(let reason): return "the peer broke the protocol: \(reason)"
        case .system(let call, let code): return "\(call) failed: \(Errno(rawValue: code).message)"
        }
    }
}

/// The system calls of the transport: Unix stream sockets, with `SOCK_CLOEXEC`, `MSG_NOSIGNAL`
/// (a peer that died never raises `SIGPIPE` here) and paths longer than `sun_path` reached
/// through `/proc/self/fd/<directory>/<name>`.
enum UnixSocket {
    /// The room in `sockaddr_un.sun_path`, without the final NUL.
    static let pathCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A new Unix stream socket (close-on-exec), or the error.
    static func make(nonBlocking: Bool = false) -> Result<Int32, RemoteTransportError> {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        return fd >= 0 ? .success(fd) : .failure(.system(call: "socket", errno: errno))
    }

    /// Calls `body` with a `sockaddr_un` naming `path` (a lossless path string). A path too long
    /// for `sun_path` is named through `/proc/self/fd/<descriptor of its folder>/<name>`, which
    /// the kernel resolves for `bind` and `connect` alike.
    static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> Result<R, RemoteTransportError> {
        let bytes = PathBytes.bytes(of: path)
        if bytes.count <= pathCapacity { return .success(withAddress(bytes: bytes, body)) }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash > 0 else {
            return .failure(.system(call: "bind", errno: ENAMETOOLONG))
        }
        let folder = PathBytes.string(fromBytes: bytes[..<slash])
        // errno read inside the closure: what `withCString` does afterwards may change it.
        let (directory, openError) = PathBytes.withCString(folder) { (open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC), errno) }
        guard directory >= 0 else { return .failure(.system(call: "open", errno: openError)) }
        defer { close(directory) }
        let short = Array("/proc/self/fd/\(directory)/".utf8) + bytes[(slash + 1)...]
        guard short.count <= pathCapacity else { return .failure(.system(call: "bind", errno: ENAMETOOLONG)) }
        return .success(withAddress(bytes: short, body))
    }

    private static func withAddress<R>(bytes: [UInt8], _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }

    /// Connects a blocking socket to `path`. No listener (`ECONNREFUSED`), no socket file
    /// (`ENOENT`) or not a socket (`ENOTSOCK`, `ECONNREFUSED`) is `.peerGone`: a dead peer is
    /// skipped at once. A stopped peer still accepts (the kernel queues the connection) until its
    /// backlog is full; then `connect` waits at most `RemoteBounds.connectTimeout` and fails with
    /// `.system(connect, EAGAIN)`.
    static func connect(to path: String) -> Result<Int32, RemoteTransportError> {
        let fd: Int32
        switch make() {
        case .success(let made): fd = made
        case .failure(let error): return .failure(error)
        }
        // A listener whose backlog is full (a stopped process flooded with connections) makes
        // `connect` wait: at most `RemoteBounds.connectTimeout`, then `EAGAIN`.
        let (seconds, attoseconds) = RemoteBounds.connectTimeout.components
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let outcome = withAddress(path) { address, length -> Int32 in
            switch valueOrErrno({ Glibc.connect(fd, address, length) }) {
            case .success: return 0
            case .failure(let error): return error.rawValue
            }
        }
        switch outcome {
        case .success(0): return .success(fd)
        case .success(let code):
            close(fd)
            switch code {
            case ECONNREFUSED, ENOENT, ENOTSOCK, ENOTDIR: return .failure(.peerGone)
            default: return .failure(.system(call: "connect", errno: code))
            }
        case .failure(let error):
            close(fd)
            return .failure(error)
        }
    }

    /// Writes all of `bytes` to `fd`, waiting (in `poll`) while the socket buffer is full, at
    /// most until `deadline` (nil: no limit). For tests and tools only: the transport itself never
    /// waits for a peer to read (`OutgoingQueue`).
    static func sendAll(_ fd: Int32, _ bytes: [UInt8], deadline: ContinuousClock.Instant?) -> Result<Void, RemoteTransportError> {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                valueOrErrno { send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            }
            // A stream socket that takes nothing without an error is treated as full.
            let code: Int32
            switch sent {
            case .success(let count) where count > 0: offset += count; continue
            case .success: code = EAGAIN
            case .failure(let error): code = error.rawValue
            }
            switch code {
            case EAGAIN, EWOULDBLOCK:
                switch waitFor(fd, events: Int16(POLLOUT), deadline: deadline, wake: -1) {
                case .ready: continue
                case .timedOut: return .failure(.timedOut)
                case .woken: return .failure(.cancelled)
                case .failed(let code): return .failure(.system(call: "poll", errno: code))
                }
            case EPIPE, ECONNRESET, ENOTCONN: return .failure(.peerGone)
            default: return .failure(.system(call: "send", errno: code))
            }
        }
        return .success(())
    }

    /// A connected pair of non-blocking, close-on-exec sockets: a wake channel for a thread
    /// sleeping in `poll` (write a byte to `write` to wake the poller of `read`).
    static func wakeChannel() -> Result<(read: Int32, write: Int32), RemoteTransportError> {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { return .failure(.system(call: "socketpair", errno: errno)) }
        return .success((fds[0], fds[1]))
    }

    /// Accepts one connection on `listener` as a non-blocking, close-on-exec descriptor — atomically
    /// (`accept4`), so a child process started meanwhile never inherits it (it would keep the
    /// connection open after we die, and the asker would not see us go). EINTR is retried; EAGAIN
    /// means no connection is waiting.
    static func accept(_ listener: Int32) -> Result<Int32, Errno> {
        valueOrErrno { cshim_accept4(listener, nil, nil, CSHIM_SOCK_CLOEXEC | CSHIM_SOCK_NONBLOCK) }
    }

    enum WaitOutcome: Equatable {
        case ready, timedOut, woken, failed(Int32)
    }

    /// Sleeps in `poll` until `fd` is ready for `events` (or reports an error or hang-up, which
    /// the next read or write will see), `wake` becomes readable, or `deadline` passes.
    static func waitFor(_ fd: Int32, events: Int16, deadline: ContinuousClock.Instant?, wake: Int32) -> WaitOutcome {
        var fds = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        while true {
            if let deadline, deadline <= .now { return .timedOut }
            // The timeout is computed again when an interrupted `poll` is retried.
            let count: Int32
            switch valueOrErrno({ poll(&fds, wake >= 0 ? 2 : 1, pollTimeout(until: deadline)) }) {
            case .success(let ready): count = ready
            case .failure(let error): return .failed(error.rawValue)
            }
            if wake >= 0, fds[1].revents != 0 { return .woken }
            if fds[0].revents != 0 { return .ready }
            if count == 0, deadline == nil { continue }
        }
    }

    /// `poll`'s timeout in milliseconds until `deadline` (-1: none; 0 when it has passed), rounded
    /// up, so a poller never wakes just before its deadline and spins.
    static func pollTimeout(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let left = deadline - .now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
