import FileCoordination
import Foundation
import Glibc
import Synchronization
import SystemSupport

/// One TCP connection to an HTTP server: a non-blocking socket whose every wait is a `poll(2)`
/// bounded by the exchange's ``HTTPWaitLimits``, and the buffer of bytes read but not yet used.
///
/// Used by one exchange at a time (the ``HTTPConnectionPool`` hands it out to one taker), on that
/// exchange's thread. ``shutDown()`` may be called from any thread (a cancelled task) while the
/// owner waits; it and ``close()`` take `descriptorState`'s lock, so a descriptor number that was
/// closed (and may already belong to another file) is never shut down.
final class HTTPConnection: @unchecked Sendable {
    // @unchecked: `descriptorState` is a `Locked`; `buffer`, `start`, `end`, `idleSince` and
    // `exchanges`, `gatherNanoseconds` are touched only by the one thread that holds the connection (pool ownership).

    /// The socket, or -1 once closed.
    private let descriptorState: Locked<Int32>
    /// The socket number for system calls by the owning thread (valid until ``close()``).
    let descriptor: Int32
    /// `host:port`, the pool's key.
    let key: String
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    /// When the connection went back into the pool (monotonic nanoseconds).
    var idleSince: UInt64 = 0
    /// How many exchanges this connection carried.
    var exchanges = 0
    /// When not 0, ``fill(limits:)`` finding the socket empty first sleeps this long and reads
    /// again before it waits for the next byte: a reader expecting a long stream of answers
    /// (``PlainHTTPClient/sendPipelined(_:deadline:maximumBody:handle:)``) then takes them in
    /// gulps instead of waking for every piece the server writes.
    var gatherNanoseconds: UInt64 = 0
    /// How many bytes were written to the socket so far.
    private(set) var bytesSent: Int64 = 0

    /// The read buffer's size, also the largest answer head (status line and header fields).
    static let bufferSize = 128 * 1024

    private init(descriptor: Int32, key: String) {
        self.descriptor = descriptor
        descriptorState = Locked(descriptor)
        self.key = key
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        close()
        buffer.deallocate()
    }

    // MARK: Connecting

    /// Connects to `host` (a name or a literal address, without brackets) at `port`, trying each
    /// address the resolver gives in turn, every wait bounded by `limits`. The name lookup itself
    /// (`getaddrinfo`) is the C library's, bounded by its resolver's own timeouts; a literal
    /// address involves no lookup.
    static func open(host: String, port: Int, limits: HTTPWaitLimits) throws(HTTPFailure) -> HTTPConnection {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            let reason = resolved == 0 ? "no address" : String(cString: gai_strerror(resolved))
            throw .transport("cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(first) }
        var failure = HTTPFailure.transport("cannot connect to \(host):\(port)")
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            do {
                return try connect(address.pointee, key: "\(host):\(port)", limits: limits)
            } catch {
                if error == .cancelled || error == .timedOut { throw error }
                failure = error
            }
        }
        throw failure
    }

    private static func connect(_ address: addrinfo, key: String, limits: HTTPWaitLimits) throws(HTTPFailure) -> HTTPConnection {
        let descriptor = socket(address.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                                    | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system("socket", Errno(rawValue: errno)) }
        let connection = HTTPConnection(descriptor: descriptor, key: key)
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        guard limits.interruption.use(connection) else { throw .cancelled }
        var started = Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen)
        while started != 0 && errno == EINTR { started = Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen) }
        if started != 0 {
            guard errno == EINPROGRESS else { throw .system("connect to \(key)", Errno(rawValue: errno)) }
            _ = try limits.wait(for: descriptor, events: Int16(POLLOUT))
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else {
                throw .system("connect to \(key)", Errno(rawValue: errno))
            }
            guard failure == 0 else { throw .system("connect to \(key)", Errno(rawValue: failure)) }
        }
        return connection
    }

    // MARK: Writing

    /// What happened while a request was written.
    enum WriteOutcome {
        /// All bytes went out.
        case written
        /// The server started answering (or closed) before all bytes went out: stop sending, read
        /// the answer; the connection cannot carry another request.
        case answerArrived
    }

    /// Writes all of `bytes`, waiting (bounded) whenever the socket's buffer is full. Returns
    /// ``WriteOutcome/answerArrived`` when the server has something to say before all went out.
    /// A reset or broken pipe is ``HTTPFailure/closedByServer(_:)``.
    func write(_ bytes: UnsafeRawBufferPointer, limits: HTTPWaitLimits) throws(HTTPFailure) -> WriteOutcome {
        guard let base = bytes.baseAddress else { return .written }
        var offset = 0
        while offset < bytes.count {
            let sent = send(descriptor, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent > 0 {
                offset += sent
                bytesSent += Int64(sent)
                continue
            }
            let failure = errno
            if sent < 0 && failure == EINTR { continue }
            if sent < 0 && (failure == EAGAIN || failure == EWOULDBLOCK) {
                let events = try limits.wait(for: descriptor, events: Int16(POLLOUT | POLLIN))
                if events & Int16(POLLIN) != 0 && events & Int16(POLLOUT) == 0 { return .answerArrived }
                continue
            }
            if limits.interruption.isInterrupted { throw .cancelled }
            if failure == EPIPE || failure == ECONNRESET {
                throw .closedByServer("the server closed the connection (\(Errno(rawValue: failure).message))")
            }
            throw .system("send", Errno(rawValue: failure))
        }
        return .written
    }

    /// ``write(_:limits:)`` of an array's bytes.
    func write(_ bytes: [UInt8], limits: HTTPWaitLimits) throws(HTTPFailure) -> WriteOutcome {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(HTTPFailure) -> WriteOutcome in try write(raw, limits: limits) }
        }
        return try result.get()
    }

    // MARK: Reading

    /// The bytes read and not yet consumed.
    var buffered: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[start..<end]) }

    /// Marks the first `count` buffered bytes as used.
    func consume(_ count: Int) {
        start += min(count, end - start)
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Whether the buffer has no room left (its start is at offset 0 and it is full).
    var isBufferFull: Bool { start == 0 && end == buffer.count }

    /// Reads what the socket has (waiting, bounded, for at least one byte) after the buffered
    /// bytes. Returns how many bytes arrived; 0 when the server closed the connection. A reset is
    /// ``HTTPFailure/closedByServer(_:)`` (the caller decides whether an answer had begun).
    func fill(limits: HTTPWaitLimits) throws(HTTPFailure) -> Int {
        if end == buffer.count, start > 0 {
            // Move what is left to the front.
            let count = end - start
            if let base = buffer.baseAddress { memmove(base, base + start, count) }
            start = 0
            end = count
        }
        guard end < buffer.count, let base = buffer.baseAddress else { return 0 }
        var gathered = gatherNanoseconds == 0
        while true {
            let count = recv(descriptor, base + end, buffer.count - end, 0)
            if count >= 0 {
                if count == 0, limits.interruption.isInterrupted { throw .cancelled }
                end += count
                return count
            }
            let failure = errno
            if failure == EINTR { continue }
            if failure == EAGAIN || failure == EWOULDBLOCK {
                if !gathered {
                    gathered = true
                    try limits.check()
                    var pause = timespec(tv_sec: 0, tv_nsec: Int(gatherNanoseconds % 1_000_000_000))
                    var left = timespec()
                    while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
                    try limits.check()
                    continue
                }
                _ = try limits.wait(for: descriptor, events: Int16(POLLIN))
                continue
            }
            if limits.interruption.isInterrupted { throw .cancelled }
            if failure == ECONNRESET || failure == EPIPE {
                throw .closedByServer("the server reset the connection (\(Errno(rawValue: failure).message))")
            }
            throw .system("recv", Errno(rawValue: failure))
        }
    }

    // MARK: Life

    /// Whether an idle connection can carry a request: open, nothing unread, and the server has
    /// not closed it (a `poll` without waiting sees neither data nor end of stream).
    var isUsableWhenIdle: Bool {
        guard start == end, descriptorState.withLock({ $0 >= 0 }) else { return false }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 0)
        return ready == 0
    }

    /// Shuts the socket down (both ways) so that a wait on it returns; any thread. No effect once
    /// closed.
    func shutDown() {
        descriptorState.withLock { descriptor in
            if descriptor >= 0 { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the socket; idempotent.
    func close() {
        descriptorState.withLock { descriptor in
            if descriptor >= 0 { _ = Glibc.close(descriptor) }
            descriptor = -1
        }
    }
}
