import Foundation
import Glibc
import Synchronization
import SystemSupport

/// The listening side of one process: a Unix stream socket at `path` and one thread that serves
/// every connection made to it (Docs/RemotePresenters.md, *Reaching the process* and *Hostile
/// peers*).
///
/// Threading: the endpoint's thread (`EndpointLoop`) sleeps in `poll` on the listening socket, a
/// wake channel and every accepted connection. It accepts connections, refuses those whose peer
/// is another user (`SO_PEERCRED`), reads and decodes frames and calls `handler` with each — on
/// the endpoint's thread, in arrival order, so the handler must not block (it hands work to
/// presenter queues). The handler answers through the `RemoteReply` it is given, from any
/// thread, at any later time; answers are queued and written without waiting.
///
/// Nothing a peer sends can crash the endpoint or make its thread wait for that peer; what a peer
/// can make it hold is bounded (`RemoteBounds`): at most `maximumConnections` connections (a
/// newcomer closes the one idle the longest), one unfinished frame and one chunk read per
/// connection, `RemoteBounds.outgoingByteLimit` bytes of answers queued per connection, and
/// `RemoteBounds.unansweredLimit` requests and `RemoteBounds.reacquirerLimit` reacquirers
/// outstanding per connection — a connection past a bound, silent with answers queued for
/// `RemoteBounds.drainTimeout`, or that sends a malformed frame is closed and logged
/// (`RemoteLog`); one idle for `RemoteBounds.idleTimeout` is closed quietly.
///
/// `close()` stops the thread, closes every connection and removes the socket file.
final class RemoteEndpoint: Sendable {
    typealias Handler = @Sendable (RemoteFrame, RemoteReply) -> Void

    /// Where the socket is.
    let path: String
    private let listener: Int32
    private let signals: EndpointSignals
    private let stopped = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds and listens at `path` (a lossless path string) and starts the thread.
    ///
    /// A socket file already at `path` whose listener is gone (a process that died without
    /// cleaning up: nothing accepts, `ECONNREFUSED`) is removed and replaced; one that still
    /// accepts is left alone and `.system(bind, EADDRINUSE)` is thrown. In the full design the
    /// caller owns `path` through its presence-table slot lock, so the check is a second guard.
    /// At most `maximumConnections` connections are served at once (default
    /// `RemoteBounds.maximumConnections`); a connection beyond them is served and the one idle
    /// the longest is closed (first among those with nothing in flight), so a peer can neither
    /// exhaust our descriptors nor lock other askers out. A connection with nothing in flight and
    /// no traffic for `idleTimeout` (default `RemoteBounds.idleTimeout`; shorter in tests) is
    /// closed.
    init(path: String, maximumConnections: Int = RemoteBounds.maximumConnections,
         idleTimeout: Duration = RemoteBounds.idleTimeout, handler: @escaping Handler) throws(RemoteTransportError) {
        self.path = path
        listener = try Self.listen(at: path)
        switch UnixSocket.wakeChannel() {
        case .success(let channel): signals = EndpointSignals(channel: channel)
        case .failure(let error):
            Glibc.close(listener)
            _ = PathBytes.withCString(path) { unlink($0) }
            throw error
        }
        let listener = self.listener, signals = self.signals, finished = self.finished
        let thread = Thread {
            signals.endpointThread.bindToCurrentThread()
            var loop = EndpointLoop(listener: listener, signals: signals, maximumConnections: maximumConnections,
                                    idleTimeout: idleTimeout, handler: handler)
            loop.run()
            finished.signal()
        }
        thread.name = "FileCoordination remote endpoint"
        thread.start()
    }

    deinit { close() }

    /// Stops serving: wakes the thread, waits for it to close every connection, removes the
    /// socket file. Answers sent later through a `RemoteReply` of this endpoint are dropped.
    func close() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        signals.stop()
        finished.wait()
        Glibc.close(listener)
        signals.closeChannel()
        _ = PathBytes.withCString(path) { unlink($0) }
    }

    private static func listen(at path: String) throws(RemoteTransportError) -> Int32 {
        let fd = try UnixSocket.make(nonBlocking: true).get()
        for attempt in 0..<2 {
            let bound = UnixSocket.withAddress(path) { address, length in bind(fd, address, length) == 0 ? 0 : errno }
            switch bound {
            case .success(0):
                guard Glibc.listen(fd, 128) == 0 else {
                    let code = errno
                    Glibc.close(fd)
                    throw .system(call: "listen", errno: code)
                }
                return fd
            case .success(EADDRINUSE) where attempt == 0:
                // A socket file is there: remove it only if nobody listens on it any more.
                if case .failure(.peerGone) = UnixSocket.connect(to: path).map({ Glibc.close($0) }) {
                    _ = PathBytes.withCString(path) { unlink($0) }
                    continue
                }
                Glibc.close(fd)
                throw .system(call: "bind", errno: EADDRINUSE)
            case .success(let code):
                Glibc.close(fd)
                throw .system(call: "bind", errno: code)
            case .failure(let error):
                Glibc.close(fd)
                throw error
            }
        }
        Glibc.close(fd)
        throw .system(call: "bind", errno: EADDRINUSE)
    }
}

/// How a handler answers a frame: sends frames back on the connection it came from. Safe from
/// any thread; frames never interleave, and `send` never waits for the peer (what its socket
/// does not take at once is queued and written by the endpoint's thread). Sending on a
/// connection that has closed (the asker gave up, died, or was dropped) does nothing — and a
/// reacquirer handed out then is run at once, since nobody can send it back.
final class RemoteReply: Sendable {
    private let connection: EndpointConnection
    /// Whether this frame was counted among the connection's unanswered requests
    /// (`RemoteBounds.unansweredLimit`): its first answer uncounts it.
    private let counted: Bool
    private let answered = Atomic<Bool>(false)

    init(_ connection: EndpointConnection, answering counted: Bool) {
        self.connection = connection
        self.counted = counted
    }

    /// The process at the other end, as the kernel recorded it.
    var peer: PeerCredentials { connection.peer }

    /// Sends `frame`; false when it could not (connection closed or dropped, or the frame is over
    /// the wire limits).
    @discardableResult
    func send(_ frame: RemoteFrame) -> Bool {
        var reacquirer: UInt64?
        var isAnswer = false
        switch frame {
        case .answer(let answer):
            isAnswer = true
            if case .relinquished(let handedOut?) = answer.outcome { reacquirer = handedOut }
        case .lookupAnswer: isAnswer = true
        case .request, .lookup: break
        }
        let answering = counted && isAnswer && !answered.exchange(true, ordering: .acquiringAndReleasing)
        let result = Result { () throws(RemoteCodecError) in try RemoteMessageCodec.encode(frame) }
        guard let bytes = try? result.get() else {
            RemoteLog.dropped("an answer over the wire limits")
            connection.abandon(answering: answering, handsOut: reacquirer)
            return false
        }
        return connection.send(bytes, answering: answering, handsOut: reacquirer)
    }
}
