import Glibc

/// The asking side: one connection to another process's `RemoteEndpoint`.
///
/// `ask` writes a request and sleeps in `poll` until its answer (matched by id) arrives, the
/// caller's deadline passes (`.timedOut`: a stopped peer costs at most that), the caller's
/// coordination is cancelled (`.cancelled`, woken through an eventfd — nothing polls on a
/// timer), or the peer dies (`.peerGone`, at once: the kernel closes a dead process's sockets,
/// `kill -9` included). Answers to earlier asks that were given up arrive later and are
/// discarded. Asks on one connection take turns (a lock), so frames and answers never mix;
/// requests from one connection reach the peer in the order they were sent.
final class PeerConnection: Sendable {
    /// The listening process, as the kernel recorded it when we connected.
    let peer: PeerCredentials
    private let state: Locked<State>
    /// A wake channel whose read end wakes a waiting `ask` when the coordination is cancelled.
    private let wake: (read: Int32, write: Int32)

    private struct State {
        var fd: Int32?
        var buffer = FrameBuffer()
        var nextID: UInt64 = 0
    }

    /// Connects to the endpoint at `path`. Throws `.peerGone` at once when nobody listens there,
    /// `.refusedPeer` when the listener is not a process of user `expectedUID` (this process's
    /// effective user by default; nil skips the check — tests only) — then nothing is sent.
    init(path: String, expectedUID: uid_t? = geteuid()) throws(RemoteTransportError) {
        let fd = try UnixSocket.connect(to: path).get()
        switch expectedUID.map({ PeerCredentials.check(socket: fd, expectedUID: $0) }) ?? Self.credentials(of: fd) {
        case .success(let peer): self.peer = peer
        case .failure(let error):
            close(fd)
            throw error
        }
        switch UnixSocket.wakeChannel() {
        case .success(let channel): wake = channel
        case .failure(let error):
            close(fd)
            throw error
        }
        state = Locked(State(fd: fd))
    }

    private static func credentials(of fd: Int32) -> Result<PeerCredentials, RemoteTransportError> {
        PeerCredentials.of(socket: fd).map { .success($0) } ?? .failure(.system(call: "getsockopt(SO_PEERCRED)", errno: errno))
    }

    deinit {
        state.withLock { state in
            if let fd = state.fd { close(fd) }
            state.fd = nil
        }
        close(wake.read)
        close(wake.write)
    }

    /// A fresh request id, for frames built by the caller.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Sends a frame that expects no answer (a notification, a reacquire).
    func send(_ frame: RemoteFrame, deadline: ContinuousClock.Instant?) throws(RemoteTransportError) {
        let bytes = try Self.encode(frame)
        try state.withLock { state throws(RemoteTransportError) in
            guard let fd = state.fd else { throw .peerGone }
            try UnixSocket.sendAll(fd, bytes, deadline: deadline).get()
        }
    }

    /// Sends `frame` (a request or lookup carrying `id`) and waits for the answer with that id.
    func ask(_ frame: RemoteFrame, id: UInt64, context: WaitContext) throws(RemoteTransportError) -> RemoteFrame {
        let bytes = try Self.encode(frame)
        let wake = self.wake
        let stopObserving = context.onCancel {
            var one: UInt8 = 1
            _ = write(wake.write, &one, 1)
        }
        defer { stopObserving() }
        return try state.withLock { state throws(RemoteTransportError) -> RemoteFrame in
            guard let fd = state.fd else { throw .peerGone }
            do throws(RemoteTransportError) {
                try UnixSocket.sendAll(fd, bytes, deadline: context.deadline).get()
                return try Self.awaitAnswer(id, fd: fd, buffer: &state.buffer, context: context, wake: wake.read)
            } catch {
                if error == .peerGone || error.breaksStream {
                    close(fd)
                    state.fd = nil
                }
                throw error
            }
        }
    }

    private static func awaitAnswer(
        _ id: UInt64, fd: Int32, buffer: inout FrameBuffer, context: WaitContext, wake: Int32
    ) throws(RemoteTransportError) -> RemoteFrame {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            while let frame = try next(&buffer) {
                switch frame {
                case .answer(let answer) where answer.id == id: return frame
                case .lookupAnswer(let answer) where answer.id == id: return frame
                case .answer, .lookupAnswer: continue  // the answer to an ask given up earlier
                case .request, .lookup: throw .protocolViolation("a request where an answer was expected")
                }
            }
            if context.isCancelled { throw .cancelled }
            switch UnixSocket.waitFor(fd, events: Int16(POLLIN), deadline: context.deadline, wake: wake) {
            case .ready: break
            case .timedOut: throw .timedOut
            case .woken:
                var drained = [UInt8](repeating: 0, count: 64)
                _ = read(wake, &drained, drained.count)
                if context.isCancelled { throw .cancelled }
                continue
            case .failed(let code): throw .system(call: "poll", errno: code)
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { throw .peerGone }
            if count < 0 {
                switch errno {
                case EINTR, EAGAIN: continue
                case ECONNRESET, EPIPE, ENOTCONN: throw .peerGone
                case let code: throw .system(call: "recv", errno: code)
                }
            }
            chunk.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    private static func next(_ buffer: inout FrameBuffer) throws(RemoteTransportError) -> RemoteFrame? {
        do {
            return try buffer.next()
        } catch {
            RemoteLog.dropped("a frame from a peer: \(error)")
            throw .protocolViolation(error.description)
        }
    }

    private static func encode(_ frame: RemoteFrame) throws(RemoteTransportError) -> [UInt8] {
        do {
            return try RemoteMessageCodec.encode(frame)
        } catch {
            throw .protocolViolation(error.description)
        }
    }
}

private extension RemoteTransportError {
    /// After this error the stream can no longer be trusted to line up frames.
    var breaksStream: Bool {
        switch self {
        case .protocolViolation, .system: return true
        default: return false
        }
    }
}
