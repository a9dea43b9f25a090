import Glibc

/// One connection accepted by a `RemoteEndpoint`, shared by the endpoint's thread (which reads,
/// flushes and closes it) and the `RemoteReply`s of its frames (which queue answers from any
/// thread). Everything is kept in `state`, under its lock; the descriptor is written and closed
/// only with it locked, so a late answer can never reach a descriptor number reused for another
/// file.
///
/// The bounds of `RemoteBounds` are kept here: answers are queued and written without waiting
/// (`OutgoingQueue`), and a connection that passes `outgoingByteLimit`, `unansweredLimit` or
/// `reacquirerLimit` is marked broken — the endpoint's thread then closes it.
final class EndpointConnection: Sendable {
    let peer: PeerCredentials
    private let signals: EndpointSignals
    private let state: Locked<State>

    private struct State {
        /// nil once closed.
        var fd: Int32?
        var outgoing = OutgoingQueue()
        /// Why it must be closed (a bound passed, a write failed, the peer closed it); the
        /// endpoint's thread closes it, logging the reason unless it is nil.
        var broken: String??
        /// Requests and lookups handed to the handler and not answered yet.
        var unanswered = 0
        /// Reacquirers handed out on this connection and not given back, with how many times
        /// each was handed out (a scripted endpoint may reuse one).
        var reacquirers: [UInt64: Int] = [:]
        var reacquirerCount = 0
        /// The last read or write.
        var lastActivity = ContinuousClock.now

        var inFlight: Bool { unanswered > 0 || reacquirerCount > 0 || !outgoing.isEmpty }
    }

    init(fd: Int32, peer: PeerCredentials, signals: EndpointSignals) {
        self.peer = peer
        self.signals = signals
        state = Locked(State(fd: fd))
    }

    // MARK: From any thread (answers)

    /// Queues a frame (`bytes`) and writes what the socket takes now, without waiting; the rest is
    /// flushed by the endpoint's thread. `answering`: the frame answers a counted request.
    /// `reacquirer`: the frame hands one out. False when the connection is closed or broken (a
    /// reacquirer handed out then is run by the endpoint's thread: nobody can send it back).
    func send(_ bytes: [UInt8], answering: Bool, handsOut reacquirer: UInt64?) -> Bool {
        enum After { case nothing, poke, orphan }
        let (sent, after) = state.withLock { state -> (Bool, After) in
            if answering, state.unanswered > 0 { state.unanswered -= 1 }
            guard let fd = state.fd, state.broken == nil else { return (false, reacquirer == nil ? .nothing : .orphan) }
            if reacquirer != nil, state.reacquirerCount >= RemoteBounds.reacquirerLimit {
                state.broken = "more than \(RemoteBounds.reacquirerLimit) reacquirers not given back"
                return (false, .orphan)
            }
            guard state.outgoing.admits(bytes.count) else {
                state.broken = "more than \(RemoteBounds.outgoingByteLimit) bytes of answers it does not read"
                return (false, reacquirer == nil ? .poke : .orphan)
            }
            if let reacquirer {
                state.reacquirers[reacquirer, default: 0] += 1
                state.reacquirerCount += 1
            }
            let wasEmpty = state.outgoing.isEmpty
            switch state.outgoing.send(bytes, to: fd) {
            case .drained:
                state.lastActivity = .now
                return (true, .nothing)
            case .pending:
                return (true, wasEmpty ? .poke : .nothing)  // else the endpoint's thread polls for it already
            case .failed:
                state.broken = .some(nil)  // the peer is gone
                return (false, .poke)
            }
        }
        switch after {
        case .nothing: break
        case .poke: signals.poke()
        case .orphan: signals.orphan(reacquirer!, from: self)  // wakes the endpoint's thread too
        }
        return sent
    }

    /// An answer that could not be encoded: it no longer counts as unanswered, and the
    /// reacquirer it would have handed out is run (nobody will send it back).
    func abandon(answering: Bool, handsOut reacquirer: UInt64?) {
        if answering { state.withLock { state in state.unanswered = max(0, state.unanswered - 1) } }
        if let reacquirer {
            signals.orphan(reacquirer, from: self)
        }
    }

    // MARK: On the endpoint's thread

    /// Bytes were read.
    func noteActivity() {
        signals.assertOnEndpointThread()
        state.withLock { $0.lastActivity = .now }
    }

    /// Counts one more request that expects an answer; false (and the connection broken) when
    /// `RemoteBounds.unansweredLimit` are unanswered already.
    func admitRequest() -> Bool {
        signals.assertOnEndpointThread()
        return state.withLock { state in
            guard state.unanswered < RemoteBounds.unansweredLimit else {
                state.broken = "more than \(RemoteBounds.unansweredLimit) requests unanswered"
                return false
            }
            state.unanswered += 1
            return true
        }
    }

    /// A `.reacquire` arrived: true when `reacquirer` was handed out on this connection (it is
    /// then given back); false for any other id, which is not run.
    func giveBack(_ reacquirer: UInt64) -> Bool {
        signals.assertOnEndpointThread()
        return state.withLock { state in
            guard let count = state.reacquirers[reacquirer] else { return false }
            state.reacquirers[reacquirer] = count > 1 ? count - 1 : nil
            state.reacquirerCount -= 1
            return true
        }
    }

    /// Whether it must be closed.
    var isBroken: Bool { state.withLock { $0.broken != nil } }

    /// It must be closed for `reason` (logged).
    func markBroken(_ reason: String) {
        state.withLock { state in if state.broken == nil { state.broken = .some(reason) } }
    }

    /// The peer closed it (end of file, a reset): it is closed without a log line.
    func markClosed() {
        signals.assertOnEndpointThread()
        state.withLock { state in if state.broken == nil { state.broken = .some(nil) } }
    }

    /// Writes what is queued, without waiting (the socket reported `POLLOUT`).
    func flush() {
        signals.assertOnEndpointThread()
        state.withLock { state in
            guard let fd = state.fd, state.broken == nil, !state.outgoing.isEmpty else { return }
            switch state.outgoing.flush(to: fd) {
            case .drained, .pending: state.lastActivity = .now
            case .failed: state.broken = .some(nil)  // the peer is gone
            }
        }
    }

    enum Schedule {
        /// Keep it: poll for `POLLOUT` too when `wantsWrite`; look again at `due` at the latest.
        case keep(wantsWrite: Bool, due: ContinuousClock.Instant?)
        /// Close it; `reason` is logged (nil: closed quietly, as when idle).
        case close(reason: String?)
    }

    /// What the endpoint's thread does with it at `now`: closes it when broken, when it has read
    /// nothing of its queued answers for `RemoteBounds.drainTimeout`, or when it has had nothing in
    /// flight and no traffic for `idleTimeout` (`RemoteBounds.idleTimeout` but in tests).
    func schedule(at now: ContinuousClock.Instant, idleTimeout: Duration) -> Schedule {
        signals.assertOnEndpointThread()
        return state.withLock { state in
            if let reason = state.broken { return .close(reason: reason) }  // nil: quietly
            if state.outgoing.isOverdue(at: now) {
                return .close(reason: "it read none of its answers for \(RemoteBounds.drainTimeout)")
            }
            let idleAt = state.inFlight ? nil : state.lastActivity + idleTimeout
            if let idleAt, idleAt <= now { return .close(reason: nil) }
            let due = [idleAt, state.outgoing.overdueAt].compactMap { $0 }.min()
            return .keep(wantsWrite: !state.outgoing.isEmpty, due: due)
        }
    }

    /// For choosing which connection to close at the cap: whether anything is in flight, and the
    /// last traffic.
    var idleness: (inFlight: Bool, lastActivity: ContinuousClock.Instant) {
        state.withLock { ($0.inFlight, $0.lastActivity) }
    }

    /// Closes the descriptor; returns the reacquirers handed out and never given back (the caller
    /// runs them). Later `send`s return false.
    func close() -> [UInt64] {
        signals.assertOnEndpointThread()
        return state.withLock { state in
            if let fd = state.fd { Glibc.close(fd) }
            state.fd = nil
            state.outgoing = OutgoingQueue()
            if state.broken == nil { state.broken = .some(nil) }
            defer { state.reacquirers.removeAll(); state.reacquirerCount = 0 }
            return state.reacquirers.flatMap { Array(repeating: $0.key, count: $0.value) }
        }
    }
}
