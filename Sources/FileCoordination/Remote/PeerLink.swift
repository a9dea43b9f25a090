import Foundation
import Glibc

/// A kept connection from this process to another process's `RemoteEndpoint`, used by
/// `RemoteDelivery`: requests are written by the sending thread and never wait for the answer;
/// one reader thread per link sleeps in `poll` and hands each answer to the callback registered
/// under its request id (on the reader thread). When the peer dies (end of file, a reset) or
/// breaks the protocol, every pending callback is called with nil — *gone* — at once, and the
/// link is closed; `RemoteDelivery` then makes a new one if the slot has a new owner.
///
/// Callbacks of asks that nobody waits for any more (the asker timed out) stay registered until
/// their answer or the peer's end; that is what lets a late relinquishment be given back.
final class PeerLink: Sendable {
    let peer: PeerCredentials
    private let state: Locked<State>
    private let wake: (read: Int32, write: Int32)

    private struct State {
        /// The connection; nil once the reader has ended (it closes it, and the wake channel).
        var fd: Int32?
        var nextID: UInt64 = 0
        var pending: [UInt64: @Sendable (RemoteFrame?) -> Void] = [:]
        var closing = false
    }

    /// Connects to the endpoint at `path` (`.peerGone` at once when nobody listens,
    /// `.refusedPeer` for another user's process) and starts the reader thread.
    init(path: String) throws(RemoteTransportError) {
        let fd = try UnixSocket.connect(to: path).get()
        switch PeerCredentials.check(socket: fd) {
        case .success(let peer): self.peer = peer
        case .failure(let error):
            Glibc.close(fd)
            throw error
        }
        switch UnixSocket.wakeChannel() {
        case .success(let channel): wake = channel
        case .failure(let error):
            Glibc.close(fd)
            throw error
        }
        state = Locked(State(fd: fd))
        let thread = Thread { [self] in readLoop(fd) }
        thread.name = "FileCoordination remote link"
        thread.start()
    }

    var isOpen: Bool { state.withLock { $0.fd != nil && !$0.closing } }

    /// A fresh request id.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Sends a frame that expects no answer. False when the link is closed or the write failed.
    @discardableResult
    func send(_ frame: RemoteFrame) -> Bool {
        guard let bytes = Self.encode(frame) else { return false }
        return state.withLock { state in
            guard let fd = state.fd, !state.closing else { return false }
            return write(bytes, fd: fd)
        }
    }

    /// Sends `frame` (carrying `id`) and calls `answer` once with the frame answering it, or
    /// with nil when the peer is gone (now or later).
    func ask(_ frame: RemoteFrame, id: UInt64, answer: @escaping @Sendable (RemoteFrame?) -> Void) {
        guard let bytes = Self.encode(frame) else { return answer(nil) }
        let sent = state.withLock { state -> Bool in
            guard let fd = state.fd, !state.closing else { return false }
            state.pending[id] = answer
            if write(bytes, fd: fd, descriptors: frame.lentDescriptors) { return true }
            state.pending[id] = nil
            return false
        }
        if !sent { answer(nil) }
    }

    /// Closes the link: pending callbacks are called with nil.
    func close() {
        state.withLock { state in
            // The wake channel is closed by the reader, with the lock held, once it has ended.
            guard !state.closing else { return }
            var byte: UInt8 = 1
            _ = Glibc.write(wake.write, &byte, 1)
        }
    }

    /// Writes a whole frame; a peer whose socket buffer stays full for 5 s is cut off.
    /// `descriptors` (the locks a request lends) go with the frame's first byte.
    private func write(_ bytes: [UInt8], fd: Int32, descriptors: [Int32] = []) -> Bool {
        switch UnixSocket.sendAll(fd, bytes, descriptors: descriptors, deadline: .now + .seconds(5)) {
        case .success: return true
        case .failure:
            shutdown(fd, Int32(SHUT_RDWR))  // the reader sees it and fails everything pending
            return false
        }
    }

    private func readLoop(_ fd: Int32) {
        var buffer = FrameBuffer()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        reading: while true {
            switch UnixSocket.waitFor(fd, events: Int16(POLLIN), deadline: nil, wake: wake.read) {
            case .ready: break
            case .woken, .timedOut, .failed: break reading
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break
            }
            chunk.withUnsafeBytes { buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            while true {
                let next = Result { () throws(RemoteCodecError) in try buffer.next() }
                switch next {
                case .success(nil): continue reading
                case .success(let frame?):
                    let id: UInt64
                    switch frame {
                    case .answer(let answer): id = answer.id
                    case .lookupAnswer(let answer): id = answer.id
                    case .request, .lookup:
                        RemoteLog.dropped("a request from process \(peer.pid) on an asking connection")
                        break reading
                    }
                    let callback = state.withLock { $0.pending.removeValue(forKey: id) }
                    callback?(frame)
                case .failure(let error):
                    RemoteLog.dropped("a frame from process \(peer.pid): \(error)")
                    break reading
                }
            }
        }
        let pending = state.withLock { state -> [@Sendable (RemoteFrame?) -> Void] in
            state.closing = true
            if let open = state.fd { Glibc.close(open) }
            state.fd = nil
            Glibc.close(wake.read)
            Glibc.close(wake.write)
            defer { state.pending.removeAll() }
            return Array(state.pending.values)
        }
        for callback in pending { callback(nil) }
    }

    private static func encode(_ frame: RemoteFrame) -> [UInt8]? {
        let result = Result { () throws(RemoteCodecError) in try RemoteMessageCodec.encode(frame) }
        if case .failure(let error) = result { RemoteLog.dropped("a frame to send: \(error)") }
        return try? result.get()
    }
}
