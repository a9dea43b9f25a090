import Glibc

/// The synchronous face of `PeerLink`, for tests and tools: `ask` sends a request and waits on
/// the calling thread until its answer (matched by id) arrives, the caller's deadline passes
/// (`.timedOut`: a stopped peer costs at most that), the coordination is cancelled (`.cancelled`),
/// or the link ends (`.peerGone`, at once: the kernel closes a dead process's sockets, `kill -9`
/// included). Answers to asks given up arrive later and are discarded. There is one socket
/// client, `PeerLink`: this adds no socket code of its own.
final class PeerConnection: Sendable {
    private let link: PeerLink

    /// The listening process, as the kernel recorded it when we connected.
    var peer: PeerCredentials { link.peer }

    /// Connects to the endpoint at `path`. Throws `.peerGone` at once when nobody listens there,
    /// `.refusedPeer` when the listener is not a process of user `expectedUID` (this process's
    /// effective user by default; nil skips the check — tests only) — then nothing is sent.
    init(path: String, expectedUID: uid_t? = geteuid()) throws(RemoteTransportError) {
        link = try PeerLink(path: path, expectedUID: expectedUID)
    }

    deinit { link.close() }

    /// Closes the connection (an ask still waiting gets `.peerGone`).
    func close() { link.close() }

    /// A fresh request id, for frames built by the caller.
    func makeID() -> UInt64 { link.makeID() }

    /// Queues a frame that expects no answer (a notification, a reacquire); never waits for the
    /// peer (`deadline` is not needed any more and is ignored). Throws `.peerGone` when the link
    /// has ended.
    func send(_ frame: RemoteFrame, deadline: ContinuousClock.Instant? = nil) throws(RemoteTransportError) {
        guard link.send(frame) else { throw .peerGone }
    }

    /// Sends `frame` (a request or lookup carrying `id`) and waits for the answer with that id.
    func ask(_ frame: RemoteFrame, id: UInt64, context: WaitContext) throws(RemoteTransportError) -> RemoteFrame {
        let wait = RemoteWait()
        link.ask(frame, id: id) { wait.fulfil($0) }
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
}
