import Glibc
import SystemSupport

/// How other threads wake a `RemoteEndpoint`'s thread from `poll`, and what for: to stop, to look
/// at the connections again (a reply queued bytes the socket did not take at once, or found a
/// connection broken), or to hand back reacquirers whose connection closed before their answer
/// was sent (`orphan`).
///
/// The wake channel is written only with `state` locked and closed (`closeChannel`) with it
/// locked, so a late poke from a presenter's thread never reaches a descriptor number reused for
/// another file.
final class EndpointSignals: Sendable {
    /// The end the endpoint's thread polls.
    let readEnd: Int32
    /// The endpoint's thread, bound when it starts (`RemoteEndpoint.init`): what only that thread
    /// may call asserts it (`assertOnEndpointThread`).
    let endpointThread = ThreadIdentity(name: "a remote endpoint")
    private let state: Locked<State>

    private struct State {
        var writeEnd: Int32?
        var stopping = false
        /// A byte is in the channel and not yet taken: further pokes need not write another.
        var poked = false
        var orphans: [(reacquirer: UInt64, connection: EndpointConnection)] = []
    }

    init(channel: (read: Int32, write: Int32)) {
        readEnd = channel.read
        state = Locked(State(writeEnd: channel.write))
    }

    /// Asks the thread to end.
    func stop() {
        state.withLock { state in
            state.stopping = true
            Self.write(&state)
        }
    }

    /// Asks the thread to look at every connection again.
    func poke() {
        state.withLock { state in
            guard !state.poked else { return }
            Self.write(&state)
        }
    }

    /// A reacquirer handed out on `connection` after it closed: nobody will send it back, so the
    /// endpoint's thread runs it (through the handler, as a `.reacquire` request).
    func orphan(_ reacquirer: UInt64, from connection: EndpointConnection) {
        state.withLock { state in
            state.orphans.append((reacquirer, connection))
            Self.write(&state)
        }
    }

    /// Called by the endpoint's thread when `readEnd` is readable: empties the channel and returns
    /// whether to stop and the reacquirers to run.
    func take() -> (stopping: Bool, orphans: [(reacquirer: UInt64, connection: EndpointConnection)]) {
        assertOnEndpointThread()
        return state.withLock { state in
            var drained = [UInt8](repeating: 0, count: 64)
            while recv(readEnd, &drained, drained.count, Int32(MSG_DONTWAIT)) > 0 {}
            state.poked = false
            defer { state.orphans.removeAll() }
            return (state.stopping, state.orphans)
        }
    }

    /// Asserts, in debug builds, that the caller runs on the endpoint's thread.
    @inline(__always)
    func assertOnEndpointThread(file: StaticString = #fileID, line: UInt = #line) {
        endpointThread.assertCurrent(file: file, line: line)
    }

    /// Closes both ends (the thread has ended); later pokes do nothing.
    func closeChannel() {
        state.withLock { state in
            if let writeEnd = state.writeEnd { close(writeEnd) }
            state.writeEnd = nil
            close(readEnd)
        }
    }

    private static func write(_ state: inout State) {
        guard let writeEnd = state.writeEnd else { return }
        var byte: UInt8 = 1
        // Non-blocking: a full channel already wakes the thread.
        _ = send(writeEnd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        state.poked = true
    }
}
