import Glibc
import Synchronization
import SystemSupport

/// The thread of a `RemoteEndpoint`: everything here runs on it alone. It sleeps in `poll` on the
/// wake channel, the listener and every connection, and never waits for anything else: answers
/// are written without waiting (`EndpointConnection`), and a turn reads at most one chunk
/// (`RemoteBounds.readChunk`) from each connection and accepts at most `acceptsPerTurn`
/// connections, so no peer keeps the others waiting. `poll` sleeps until something happens or the
/// next bound falls due (an idle or overdue connection, the listener's pause) — never on a timer
/// otherwise.
struct EndpointLoop {
    private let listener: Int32
    private let signals: EndpointSignals
    private let maximumConnections: Int
    private let handler: RemoteEndpoint.Handler
    private var connections: [Entry] = []
    private var spare = SpareDescriptor()
    /// Set when `accept` fails in a way that a retry would repeat at once (the descriptor limit
    /// with nothing to close and no spare, or the kernel out of memory): the listener is left
    /// out of `poll` until then.
    private var listenerPausedUntil: ContinuousClock.Instant?
    private var loggedDescriptorLimit = false
    private var log = DropLog()
    private let idleTimeout: Duration

    /// Connections accepted per turn at most (a flood of connections waits for the next turn).
    static let acceptsPerTurn = 64
    /// How long the listener is left out of `poll` after an `accept` failure that would repeat.
    static let listenerPause: Duration = .seconds(1)

    private struct Entry {
        let fd: Int32
        let connection: EndpointConnection
        var buffer = FrameBuffer()
    }

    init(listener: Int32, signals: EndpointSignals, maximumConnections: Int, idleTimeout: Duration,
         handler: @escaping RemoteEndpoint.Handler) {
        self.listener = listener
        self.signals = signals
        self.maximumConnections = max(1, maximumConnections)
        self.idleTimeout = idleTimeout
        self.handler = handler
    }

    mutating func run() {
        var chunk = [UInt8](repeating: 0, count: RemoteBounds.readChunk)
        while true {
            let now = ContinuousClock.now
            var (due, writing) = sweep(at: now)
            if let paused = listenerPausedUntil {
                if paused <= now { listenerPausedUntil = nil } else { due = min(due ?? paused, paused) }
            }
            var fds = [pollfd(fd: signals.readEnd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: listenerPausedUntil == nil ? listener : -1, events: Int16(POLLIN), revents: 0)]
            for (entry, wantsWrite) in zip(connections, writing) {
                fds.append(pollfd(fd: entry.fd, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0))
            }
            // An interrupted `poll` is retried, with its timeout computed again.
            let polled = valueOrErrno { poll(&fds, nfds_t(fds.count), UnixSocket.pollTimeout(until: due)) }
            EndpointStatistics.turns.add(1, ordering: .relaxed)
            if case .failure(let error) = polled {
                log.dropped("the endpoint (poll failed: \(error.message))")
                break
            }
            if fds[0].revents != 0 {
                let (stopping, orphans) = signals.take()
                if stopping { break }
                for orphan in orphans { runReacquirer(orphan.reacquirer, of: orphan.connection) }
            }
            // Connections first, in the order polled: closing and accepting wait until after,
            // so an index still names the connection polled at it.
            for index in connections.indices {
                let revents = Int32(fds[index + 2].revents)
                guard revents != 0 else { continue }
                if revents & Int32(POLLOUT) != 0 { connections[index].connection.flush() }
                if revents & Int32(POLLIN | POLLHUP | POLLERR) != 0 { read(at: index, into: &chunk) }
            }
            _ = sweep(at: .now)
            if fds[1].revents != 0 { acceptSome() }
        }
        // Stopping: nobody can give back a reacquirer handed out here any more.
        let closing = connections
        connections.removeAll()
        for entry in closing {
            for reacquirer in entry.connection.close() { runReacquirer(reacquirer, of: entry.connection) }
        }
        spare.close()
    }

    // MARK: Closing

    /// Closes what must be closed (broken, overdue, idle); returns when to look again and, for
    /// each connection left, whether it has bytes queued to write.
    private mutating func sweep(at now: ContinuousClock.Instant) -> (due: ContinuousClock.Instant?, writing: [Bool]) {
        var due: ContinuousClock.Instant?
        var writing: [Bool] = []
        writing.reserveCapacity(connections.count)
        var index = connections.startIndex
        while index < connections.endIndex {
            switch connections[index].connection.schedule(at: now, idleTimeout: idleTimeout) {
            case .keep(let wantsWrite, let next):
                if let next { due = min(due ?? next, next) }
                writing.append(wantsWrite)
                index += 1
            case .close(let reason):
                close(at: index, reason: reason)
            }
        }
        return (due, writing)
    }

    /// Closes the connection at `index`, logs `reason` (nil: quietly) and runs the reacquirers it
    /// was handed and never gave back (its asker cannot any more).
    private mutating func close(at index: Int, reason: String?) {
        let entry = connections.remove(at: index)
        if let reason { log.dropped("a connection from process \(entry.connection.peer.pid): \(reason)") }
        let reacquirers = entry.connection.close()
        for reacquirer in reacquirers { runReacquirer(reacquirer, of: entry.connection) }
    }

    private func runReacquirer(_ reacquirer: UInt64, of connection: EndpointConnection) {
        let request = RemoteRequest(id: 0, presenterNumber: 0, presentedPath: "/", message: .reacquire(ReacquirerID(value: reacquirer)))
        handler(.request(request), RemoteReply(connection, answering: false))
    }

    // MARK: Reading

    /// Reads one chunk and hands every whole frame to the handler; marks the connection broken or
    /// closes it when it must go (end of file, an error, a malformed frame, a bound passed).
    private mutating func read(at index: Int, into chunk: inout [UInt8]) {
        let fd = connections[index].fd, connection = connections[index].connection
        // Plain `recv`: descriptors a peer attaches (`SCM_RIGHTS`) are discarded by the kernel.
        let received = chunk.withUnsafeMutableBytes { raw in
            valueOrErrno { recv(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT)) }
        }
        let count: Int
        switch received {
        case .success(let value): count = value
        case .failure(let error) where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK: return
        case .failure: count = -1
        }
        guard count > 0 else {
            // End of file or a reset: the sweep closes it, quietly unless a frame was cut short.
            if connections[index].buffer.count > 0 {
                connection.markBroken("it ended in the middle of a frame (\(connections[index].buffer.count) bytes)")
            } else {
                connection.markClosed()
            }
            return
        }
        connection.noteActivity()
        chunk.withUnsafeBytes { connections[index].buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        while !connection.isBroken {
            let next = Result { () throws(RemoteCodecError) in try connections[index].buffer.next() }
            switch next {
            case .success(let frame?): handle(frame, from: connection)
            case .success(nil): return
            case .failure(let error):
                connection.markBroken("a malformed frame: \(error)")
                return
            }
        }
    }

    /// Hands one frame to the handler, counting what it must answer (`RemoteBounds`).
    private func handle(_ frame: RemoteFrame, from connection: EndpointConnection) {
        switch frame {
        case .request(let request):
            if case .reacquire(let id) = request.message {
                // Only a reacquirer handed out on this connection is run: another asker's is not
                // this peer's to run, and one handed out on a connection that closed ran then.
                guard connection.giveBack(id.value) else { return }
                handler(frame, RemoteReply(connection, answering: false))
            } else if request.message.expectedAnswer == .none {
                handler(frame, RemoteReply(connection, answering: false))
            } else if connection.admitRequest() {
                handler(frame, RemoteReply(connection, answering: true))
            }
        case .lookup:
            if connection.admitRequest() { handler(frame, RemoteReply(connection, answering: true)) }
        case .answer, .lookupAnswer:
            connection.markBroken("an answer sent to a serving connection")
        }
    }

    // MARK: Accepting

    private mutating func acceptSome() {
        for _ in 0..<Self.acceptsPerTurn {
            let fd: Int32
            switch UnixSocket.accept(listener) {
            case .success(let accepted): fd = accepted
            case .failure(let error):
                switch error.rawValue {
                case ECONNABORTED, EPROTO, EPERM: continue
                case EAGAIN, EWOULDBLOCK: return
                case EMFILE, ENFILE:
                    if !loggedDescriptorLimit {
                        loggedDescriptorLimit = true
                        log.dropped("connections beyond the descriptor limit (accept: \(error.message)): each newcomer closes the connection idle the longest (logged once)")
                    }
                    if !connections.isEmpty {
                        closeIdlest(because: "this process is at its descriptor limit and another process connected")
                        continue
                    }
                    if spare.refuseOne(on: listener) { continue }
                    pauseListener()
                    return
                default:
                    log.dropped("a connection (accept: \(error.message)); the listener rests for \(Self.listenerPause)")
                    pauseListener()
                    return
                }
            }
            let peer: PeerCredentials
            switch PeerCredentials.check(socket: fd) {
            case .success(let checked): peer = checked
            case .failure(let error):
                log.dropped("a connection: \(error)")
                Glibc.close(fd)
                continue
            }
            if connections.count >= maximumConnections {
                closeIdlest(because: "\(maximumConnections) connections are open and another process connected")
            }
            connections.append(Entry(fd: fd, connection: EndpointConnection(fd: fd, peer: peer, signals: signals)))
        }
    }

    private mutating func pauseListener() {
        listenerPausedUntil = .now + Self.listenerPause
    }

    /// Closes the connection idle the longest, preferring those with nothing in flight.
    private mutating func closeIdlest(because reason: String) {
        var chosen: (index: Int, inFlight: Bool, last: ContinuousClock.Instant)?
        for (index, entry) in connections.enumerated() {
            let (inFlight, last) = entry.connection.idleness
            if let best = chosen, best.inFlight == inFlight ? best.last <= last : !best.inFlight { continue }
            chosen = (index, inFlight, last)
        }
        guard let chosen else { return }
        close(at: chosen.index, reason: "closed, idle the longest: \(reason)")
    }
}

/// Counters of the endpoints of this process, for tests: a hostile peer must not make an
/// endpoint's thread spin.
enum EndpointStatistics {
    /// Turns of every endpoint's poll loop since the process started (one per return of `poll`).
    static let turns = Atomic<Int>(0)
}
