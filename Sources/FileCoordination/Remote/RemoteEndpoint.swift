import Foundation
import Glibc
import SystemSupport

/// The listening side of one process: a Unix stream socket at `path` and one thread that serves
/// every connection made to it (Docs/RemotePresenters.md, *Reaching the process*).
///
/// Threading: the endpoint's thread sleeps in `poll` on the listening socket, a wake pipe and
/// every accepted connection. It accepts connections, refuses those whose peer is another user
/// (`SO_PEERCRED`), reads and decodes frames and calls `handler` with each — on the endpoint's
/// thread, in arrival order, so the handler must not block (it hands work to presenter queues).
/// The handler answers through the `RemoteReply` it is given, from any thread, at any later
/// time. A malformed frame is logged (`RemoteLog`) and its connection closed; nothing a peer
/// sends can crash the endpoint.
///
/// `close()` stops the thread, closes every connection and removes the socket file.
final class RemoteEndpoint: Sendable {
    typealias Handler = @Sendable (RemoteFrame, RemoteReply) -> Void

    /// Where the socket is.
    let path: String
    private let listener: Int32
    /// A wake channel: `close()` writes one byte to wake the thread.
    private let wakePipe: (read: Int32, write: Int32)
    private let stopped = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Binds and listens at `path` (a lossless path string) and starts the thread.
    ///
    /// A socket file already at `path` whose listener is gone (a process that died without
    /// cleaning up: nothing accepts, `ECONNREFUSED`) is removed and replaced; one that still
    /// accepts is left alone and `.system(bind, EADDRINUSE)` is thrown. In the full design the
    /// caller owns `path` through its presence-table slot lock, so the check is a second guard.
    /// At most `maximumConnections` connections are served at once (default 256); more are
    /// accepted, logged and closed, so a peer cannot exhaust our descriptors.
    init(path: String, maximumConnections: Int = 256, handler: @escaping Handler) throws(RemoteTransportError) {
        self.path = path
        listener = try Self.listen(at: path)
        switch UnixSocket.wakeChannel() {
        case .success(let channel): wakePipe = channel
        case .failure(let error):
            Glibc.close(listener)
            _ = PathBytes.withCString(path) { unlink($0) }
            throw error
        }
        let listener = self.listener, wake = wakePipe.read, finished = self.finished
        let thread = Thread {
            var loop = EndpointLoop(listener: listener, wake: wake, maximumConnections: maximumConnections, handler: handler)
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
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
        finished.wait()
        Glibc.close(listener)
        Glibc.close(wakePipe.read)
        Glibc.close(wakePipe.write)
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
/// any thread; frames never interleave. Sending on a connection that has closed (the asker gave
/// up or died) does nothing. A peer that does not read for 5 s while its buffer is full has its
/// connection shut down.
final class RemoteReply: Sendable {
    fileprivate let connection: EndpointConnection

    fileprivate init(_ connection: EndpointConnection) { self.connection = connection }

    /// The process at the other end, as the kernel recorded it.
    var peer: PeerCredentials { connection.peer }

    /// Sends `frame`; false when it could not (connection closed, or the frame is over the limits).
    @discardableResult
    func send(_ frame: RemoteFrame) -> Bool {
        let result = Result { () throws(RemoteCodecError) in try RemoteMessageCodec.encode(frame) }
        guard let bytes = try? result.get() else {
            RemoteLog.dropped("an answer over the wire limits")
            return false
        }
        return connection.write(bytes)
    }
}

/// One accepted connection. The descriptor is closed only with `state` locked, and written only
/// with it locked, so a late answer can never reach a descriptor number reused for another file.
private final class EndpointConnection: Sendable {
    let peer: PeerCredentials
    private let state: Locked<Int32?>

    init(fd: Int32, peer: PeerCredentials) {
        self.peer = peer
        state = Locked(fd)
    }

    func write(_ bytes: [UInt8]) -> Bool {
        state.withLock { fd in
            guard let open = fd else { return false }
            switch UnixSocket.sendAll(open, bytes, deadline: .now + .seconds(5)) {
            case .success: return true
            case .failure:
                shutdown(open, Int32(SHUT_RDWR))  // the endpoint's thread sees it and closes
                return false
            }
        }
    }

    func close() {
        state.withLock { fd in
            if let open = fd { Glibc.close(open) }
            fd = nil
        }
    }
}

/// The endpoint's thread: everything here runs on it alone.
private struct EndpointLoop {
    let listener: Int32
    let wake: Int32
    let maximumConnections: Int
    let handler: RemoteEndpoint.Handler
    private var connections: [(fd: Int32, connection: EndpointConnection, buffer: FrameBuffer)] = []

    init(listener: Int32, wake: Int32, maximumConnections: Int, handler: @escaping RemoteEndpoint.Handler) {
        self.listener = listener
        self.wake = wake
        self.maximumConnections = maximumConnections
        self.handler = handler
    }

    mutating func run() {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            fds += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                RemoteLog.dropped("the endpoint (poll failed: \(Errno(rawValue: errno).message))")
                break
            }
            if fds[0].revents != 0 { break }
            if fds[1].revents != 0 { acceptAll() }
            var closing: [Int32] = []
            for (index, entry) in fds.enumerated().dropFirst(2) where entry.revents != 0 {
                if !readFrames(at: index - 2, into: &chunk) { closing.append(entry.fd) }
            }
            for fd in closing { drop(fd) }
        }
        for index in connections.indices {
            connections[index].connection.close()
            connections[index].buffer.closeDescriptors()
        }
        connections.removeAll()
    }

    private mutating func acceptAll() {
        while true {
            let fd = UnixSocket.accept(listener)
            guard fd >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // EAGAIN: none left (or a transient error: poll tells us again)
            }
            guard connections.count < maximumConnections else {
                RemoteLog.dropped("a connection: \(maximumConnections) are open already")
                Glibc.close(fd)
                continue
            }
            switch PeerCredentials.check(socket: fd) {
            case .success(let peer):
                connections.append((fd, EndpointConnection(fd: fd, peer: peer), FrameBuffer()))
            case .failure(let error):
                RemoteLog.dropped("a connection: \(error)")
                Glibc.close(fd)
            }
        }
    }

    /// Reads what is there and hands every whole frame to the handler. False when the
    /// connection must be closed (end of file, an error, a malformed frame).
    private mutating func readFrames(at index: Int, into chunk: inout [UInt8]) -> Bool {
        let fd = connections[index].fd
        let count = UnixSocket.receive(fd, into: &chunk, descriptors: &connections[index].buffer.descriptors)
        if count == 0 { return false }
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        chunk.withUnsafeBytes { connections[index].buffer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        let reply = RemoteReply(connections[index].connection)
        while true {
            let next = Result { () throws(RemoteCodecError) in try connections[index].buffer.next() }
            switch next {
            case .success(let frame?): handler(frame, reply)
            case .success(nil): return true
            case .failure(let error):
                RemoteLog.dropped("a frame from process \(reply.peer.pid): \(error)")
                return false
            }
        }
    }

    private mutating func drop(_ fd: Int32) {
        guard let index = connections.firstIndex(where: { $0.fd == fd }) else { return }
        connections[index].connection.close()
        connections[index].buffer.closeDescriptors()
        connections.remove(at: index)
    }
}
