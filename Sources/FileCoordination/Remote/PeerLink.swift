import Foundation
import Glibc
import SystemSupport

/// A kept connection from this process to another process's `RemoteEndpoint` — the one socket
/// client of the transport: `RemoteDelivery` uses it, and so do tests and tools (`RemoteTesting`),
/// through the same calls plus `ask(_:id:context:)`, which waits on the calling thread. (A hostile
/// peer in the tests is not a client: it writes raw bytes on a plain `UnixSocket`.)
///
/// Nothing here waits for the peer: `send` and `ask` queue the frame and write what the socket
/// takes at once, without waiting (`OutgoingQueue`); the link's one thread sleeps in `poll`,
/// writes the rest when the socket is writable, and hands each answer to the callback registered
/// under its request id (on that thread). So a peer that does not read never holds the calling
/// thread nor the link's lock.
///
/// The link ends — every pending callback is then called with nil, *gone*, at once — when the
/// peer dies or closes it (end of file, a reset), breaks the protocol, leaves more than
/// `RemoteBounds.outgoingByteLimit` bytes of our requests unread, or reads none of them for
/// `RemoteBounds.drainTimeout`. `RemoteDelivery` then makes a new link (and asks once more when
/// the peer's process is still alive).
///
/// Callbacks of asks that nobody waits for any more (the asker timed out) stay registered until
/// their answer or the link's end; that is what lets a late relinquishment be given back.
final class PeerLink: Sendable {
    let peer: PeerCredentials
    private let state: Locked<State>
    /// Wakes the link's thread (to end, or to poll for `POLLOUT`). Written only with `state`
    /// locked while `state.fd` is set; the thread closes it with `state` locked as it ends.
    private let wake: (read: Int32, write: Int32)

    private struct State {
        /// The connection; nil once the link's thread has ended (it closes it, and the wake channel).
        var fd: Int32?
        var nextID: UInt64 = 0
        var pending: [UInt64: @Sendable (RemoteFrame?) -> Void] = [:]
        /// The link is ending (`close()`, or a bound passed): nothing more is queued.
        var ending = false
        var outgoing = OutgoingQueue()
        /// A byte is in the wake channel and not yet taken.
        var poked = false
        /// The last frame queued or received.
        var lastUse = ContinuousClock.now
        /// Reacquirers the peer handed us and we have not sent back (`.reacquire`): its presenter
        /// stays relinquished for us, so the link is in use.
        var reacquirers: Set<UInt64> = []
    }

    /// Connects to the endpoint at `path` (`.peerGone` at once when nobody listens,
    /// `.refusedPeer` for a process of another user than `expectedUID` — this process's effective
    /// user by default; nil skips the check, for tests) and starts the link's thread.
    init(path: String, expectedUID: uid_t? = geteuid()) throws(RemoteTransportError) {
        let fd = try UnixSocket.connect(to: path).get()
        let credentials: Result<PeerCredentials, RemoteTransportError>
        if let expectedUID {
            credentials = PeerCredentials.check(socket: fd, expectedUID: expectedUID)
        } else {
            credentials = PeerCredentials.of(socket: fd).map { .success($0) } ?? .failure(.system(call: "getsockopt(SO_PEERCRED)", errno: errno))
        }
        switch credentials {
        case .success(let peer): self.peer = peer
        case .failure(let error):
            Glibc.close(fd)
            throw error
        }
        // Non-blocking from here on: every write is `MSG_DONTWAIT` already, this covers the rest.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        switch UnixSocket.wakeChannel() {
        case .success(let channel): wake = channel
        case .failure(let error):
            Glibc.close(fd)
            throw error
        }
        state = Locked(State(fd: fd))
        let thread = Thread { [self] in run(fd) }
        thread.name = "FileCoordination remote link"
        thread.start()
    }

    var isOpen: Bool { state.withLock { $0.fd != nil && !$0.ending } }

    /// Whether the link should be replaced before it is used again: nothing in flight (no ask
    /// pending, nothing queued, no reacquirer held) and unused for `RemoteBounds.linkReuseLimit`
    /// — so the endpoint, which closes such connections after `RemoteBounds.idleTimeout`, never
    /// closes one while we write to it.
    var isStale: Bool {
        state.withLock { state in
            state.pending.isEmpty && state.outgoing.isEmpty && state.reacquirers.isEmpty
                && ContinuousClock.now - state.lastUse > RemoteBounds.linkReuseLimit
        }
    }

    /// A fresh request id.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Queues a frame that expects no answer; never waits. False when the link is closed or ends
    /// because of it (a bound passed).
    @discardableResult
    func send(_ frame: RemoteFrame) -> Bool {
        guard let bytes = Self.encode(frame) else { return false }
        return state.withLock { state in
            if case .request(let request) = frame, case .reacquire(let id) = request.message {
                state.reacquirers.remove(id.value)
            }
            return enqueue(bytes, &state)
        }
    }

    /// Queues `frame` (carrying `id`) and calls `answer` once with the frame answering it, or
    /// with nil when the peer is gone or the link ends first (now or later). Never waits.
    func ask(_ frame: RemoteFrame, id: UInt64, answer: @escaping @Sendable (RemoteFrame?) -> Void) {
        guard let bytes = Self.encode(frame) else { return answer(nil) }
        let queued = state.withLock { state -> Bool in
            guard state.fd != nil, !state.ending else { return false }
            state.pending[id] = answer
            if enqueue(bytes, &state) { return true }
            state.pending[id] = nil
            return false
        }
        if !queued { answer(nil) }
    }

    /// Sends `frame` (a request or lookup carrying `id`) and waits on the calling thread for the
    /// answer with that id — for tests and tools; the library's own delivery never waits here. Ends
    /// when the answer arrives, the context's deadline passes (`.timedOut`: a stopped peer costs at
    /// most that), the coordination is cancelled (`.cancelled`), or the link ends (`.peerGone`, at
    /// once: the kernel closes a dead process's sockets, `kill -9` included). An answer to an ask
    /// given up arrives later and is discarded.
    func ask(_ frame: RemoteFrame, id: UInt64, context: WaitContext) throws(RemoteTransportError) -> RemoteFrame {
        let wait = RemoteWait()
        ask(frame, id: id) { wait.fulfil($0) }
        let answer: RemoteFrame?
        do throws(CoordinationError) {
            answer = try wait.wait(context)
        } catch .cancelled {
            throw .cancelled
        } catch {
            throw .timedOut
        }
        guard let answer else { throw .peerGone }
        return answer
    }

    /// Ends the link: pending callbacks are called with nil (on the link's thread).
    func close() {
        state.withLock { state in
            state.ending = true
            wakeThread(&state)
        }
    }

    // MARK: Writing (with `state` locked)

    /// Queues `bytes` and writes what the socket takes now. False when nothing can be queued.
    private func enqueue(_ bytes: [UInt8], _ state: inout State) -> Bool {
        guard let fd = state.fd, !state.ending else { return false }
        guard state.outgoing.admits(bytes.count) else {
            RemoteLog.dropped("the link to process \(peer.pid): more than \(RemoteBounds.outgoingByteLimit) bytes of requests it does not read")
            state.ending = true
            wakeThread(&state)
            return false
        }
        state.lastUse = .now
        let wasEmpty = state.outgoing.isEmpty
        switch state.outgoing.send(bytes, to: fd) {
        case .drained: break
        case .pending: if wasEmpty { wakeThread(&state) }  // to poll for POLLOUT (else it does already)
        case .failed: state.ending = true; wakeThread(&state)  // its pending callbacks get nil
        }
        return true
    }

    private func wakeThread(_ state: inout State) {
        guard state.fd != nil, !state.poked else { return }
        var byte: UInt8 = 1
        _ = Glibc.send(wake.write, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        state.poked = true
    }

    // MARK: The link's thread

    private func run(_ fd: Int32) {
        var buffer = FrameBuffer()
        var chunk = [UInt8](repeating: 0, count: RemoteBounds.readChunk)
        running: while true {
            let (ending, wantsWrite, due) = state.withLock { state in
                state.poked = false
                return (state.ending, !state.outgoing.isEmpty, state.outgoing.overdueAt)
            }
            if ending { break }
            if let due, due <= .now {
                RemoteLog.dropped("the link to process \(peer.pid): it read none of our requests for \(RemoteBounds.drainTimeout)")
                break
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
                       pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            // An interrupted `poll` is retried, with its timeout computed again.
            if case .failure = valueOrErrno({ poll(&fds, 2, UnixSocket.pollTimeout(until: due)) }) { break }
            if fds[1].revents != 0 {
                var drained = [UInt8](repeating: 0, count: 64)
                while recv(wake.read, &drained, drained.count, Int32(MSG_DONTWAIT)) > 0 {}
            }
            let revents = Int32(fds[0].revents)
            if revents & Int32(POLLOUT) != 0 {
                let failed = state.withLock { state in
                    state.outgoing.flush(to: fd) == .failed
                }
                if failed { break }
            }
            guard revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 else { continue }
            let received = chunk.withUnsafeMutableBytes { raw in
                valueOrErrno { recv(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT)) }
            }
            let count: Int
            switch received {
            case .success(0): break running
            case .success(let value): count = value
            case .failure(let error) where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK: continue running
            case .failure: break running
            }
            chunk.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            while true {
                let next = Result { () throws(RemoteCodecError) in try buffer.next() }
                switch next {
                case .success(nil): continue running
                case .success(let frame?):
                    guard deliver(frame) else { break running }
                case .failure(let error):
                    RemoteLog.dropped("a frame from process \(peer.pid): \(error)")
                    break running
                }
            }
        }
        let pending = state.withLock { state -> [@Sendable (RemoteFrame?) -> Void] in
            state.ending = true
            if let open = state.fd { Glibc.close(open) }
            state.fd = nil
            state.outgoing = OutgoingQueue()
            Glibc.close(wake.read)
            Glibc.close(wake.write)
            defer { state.pending.removeAll() }
            return Array(state.pending.values)
        }
        for callback in pending { callback(nil) }
    }

    /// Hands an answer to its callback; false for a frame an asking connection must not get.
    private func deliver(_ frame: RemoteFrame) -> Bool {
        let id: UInt64
        var reacquirer: UInt64?
        switch frame {
        case .answer(let answer):
            id = answer.id
            if case .relinquished(let handedOut?) = answer.outcome { reacquirer = handedOut }
        case .lookupAnswer(let answer): id = answer.id
        case .request, .lookup:
            RemoteLog.dropped("a request from process \(peer.pid) on an asking connection")
            return false
        }
        let callback = state.withLock { state in
            state.lastUse = .now
            let callback = state.pending.removeValue(forKey: id)
            if callback != nil, let reacquirer { state.reacquirers.insert(reacquirer) }
            return callback
        }
        callback?(frame)
        return true
    }

    private static func encode(_ frame: RemoteFrame) -> [UInt8]? {
        let result = Result { () throws(RemoteCodecError) in try RemoteMessageCodec.encode(frame) }
        if case .failure(let error) = result { RemoteLog.dropped("a frame to send: \(error)") }
        return try? result.get()
    }
}
