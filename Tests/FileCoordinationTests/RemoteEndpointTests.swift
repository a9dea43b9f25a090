import Foundation
import Glibc
import Testing
import TestSupport
@testable import FileCoordination

/// The transport to presenters in other processes, with real separate processes
/// (`CoordinationTestHelper remote-serve / remote-ask`), sequenced through their output lines.
@Suite("Remote presenters: endpoints across processes", .serialized)
struct RemoteEndpointTests {
    static let nobody: UInt32 = 65534

    private func serve(_ path: String, unanswered: String = "-", as uid: UInt32? = nil) throws -> (ChildProcess, Int32) {
        let child = try ChildProcess(["remote-serve", path, unanswered] + (uid.map { ["\($0)"] } ?? []))
        let line = child.expect("LISTENING") ?? "nothing"
        guard line.hasPrefix("LISTENING "), let pid = Int32(line.dropFirst("LISTENING ".count)) else {
            throw TransportTestFailure(line)
        }
        return (child, pid)
    }

    private func request(_ connection: PeerLink, _ message: PresenterMessage) -> (RemoteFrame, UInt64) {
        let id = connection.makeID()
        return (.request(RemoteRequest(id: id, presenterNumber: 1, presentedPath: "/doc.txt", message: message)), id)
    }

    private func ask(_ connection: PeerLink, _ message: PresenterMessage, timeout: Duration? = .seconds(30),
                     token: CancellationToken = CancellationToken()) throws(RemoteTransportError) -> RemoteAnswer.Outcome? {
        let (frame, id) = request(connection, message)
        guard case .answer(let answer) = try connection.ask(frame, id: id, context: WaitContext(timeout: timeout, token: token)) else { return nil }
        #expect(answer.id == id)
        return answer.outcome
    }

    @Test("a request and its answer go round trip, notifications arrive in order before it, a refusal keeps its domain and code")
    func roundTrip() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let (child, pid) = try serve(path)
        let connection = try PeerLink(path: path)
        defer { connection.close() }
        #expect(connection.peer.pid == pid)
        #expect(connection.peer.uid == geteuid())

        #expect(connection.send(request(connection, .itemDidChange).0))
        #expect(connection.send(request(connection, .subitemDidAppear(at: URL(fileURLWithPath: "/d/new.txt"))).0))
        #expect(try ask(connection, .relinquishToWriter) == .relinquished(reacquirer: 5))
        #expect(child.readLine() == "GOT itemDidChange /doc.txt")
        #expect(child.readLine() == "GOT subitemDidAppear /doc.txt")
        #expect(child.readLine() == "GOT relinquishToWriter /doc.txt")

        #expect(try ask(connection, .saveChanges) == .completed(nil))
        guard case .completed(let refusal?)? = try ask(connection, .accommodateDeletion) else {
            Issue.record("the deletion was not refused"); return
        }
        let error = refusal.nsError
        #expect(error.domain == RemoteTesting.refusalDomain)
        #expect(error.code == RemoteTesting.refusalCode)
        #expect(error.localizedDescription == RemoteTesting.refusalMessage)

        let lookupID = connection.makeID()
        let found = try connection.ask(.lookup(RemoteLookup(id: lookupID, path: "/d", scope: .all)), id: lookupID,
                                       context: WaitContext(timeout: .seconds(30), token: CancellationToken()))
        #expect(found == .lookupAnswer(RemoteLookupAnswer(id: lookupID, entries: [.init(presenterNumber: 1, path: "/d")])))

        // Many asks on one connection, each relinquishment given back, as an asker does (an
        // endpoint holds at most `RemoteBounds.reacquirerLimit`). The round-trip time is measured
        // by coordination-benchmark, not here.
        var relinquished = 0
        for _ in 0..<300 {
            guard case .relinquished(let reacquirer?)? = try ask(connection, .relinquishToReader) else { continue }
            relinquished += 1
            #expect(connection.send(request(connection, .reacquire(ReacquirerID(value: reacquirer))).0))
        }
        #expect(relinquished == 300)

        child.closeInput()
        #expect(child.expect("STOPPED") == "STOPPED")
        child.waitForExit()
        #expect(!FileManager.default.fileExists(atPath: path))  // the endpoint removed its socket
    }

    @Test("a peer killed with kill -9 while being asked is detected at once, with no timeout; its stale socket is replaced")
    func peerKilledWhileAsked() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let (child, _) = try serve(path, unanswered: "saveChanges")
        let connection = try PeerLink(path: path)
        defer { connection.close() }
        let outcome = Locked<Result<RemoteAnswer.Outcome?, RemoteTransportError>?>(nil)
        let done = onThread {
            let result = Result { () throws(RemoteTransportError) in try ask(connection, .saveChanges, timeout: nil) }
            outcome.withLock { $0 = result }
        }
        #expect(child.expect("GOT saveChanges") == "GOT saveChanges /doc.txt")
        child.kill9()
        #expect(done.wait(seconds: 30))  // safety only: without a timeout, only detection ends the ask
        #expect(outcome.withLock { $0 } == .failure(.peerGone))

        // The dead process left its socket file: connecting is refused at once.
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(throws: RemoteTransportError.peerGone) { try PeerLink(path: path).close() }
        // A new endpoint replaces the stale socket.
        let endpoint = try RemoteEndpoint(path: path) { frame, reply in
            if case .request(let request) = frame { reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: nil)))) }
        }
        defer { endpoint.close() }
        #expect(RemoteTesting.askOnce(at: path, timeout: .seconds(30)) == "ANSWERED")
    }

    @Test("a stopped peer costs the caller its timeout; once resumed it answers again and its late answer is discarded")
    func stoppedPeerTimesOut() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let (child, pid) = try serve(path)
        defer { kill(pid, SIGCONT); child.closeInput(); child.waitForExit() }
        let connection = try PeerLink(path: path)
        defer { connection.close() }
        #expect(try ask(connection, .relinquishToWriter) == .relinquished(reacquirer: 5))
        #expect(child.readLine() == "GOT relinquishToWriter /doc.txt")

        #expect(kill(pid, SIGSTOP) == 0)
        var info = siginfo_t()
        #expect(waitid(P_PID, id_t(pid), &info, WSTOPPED | WNOWAIT) == 0)  // returns once it is stopped
        let clock = ContinuousClock()
        let start = clock.now
        #expect(throws: RemoteTransportError.timedOut) { try ask(connection, .relinquishToReader, timeout: .milliseconds(300)) }
        let waited = clock.now - start
        #expect(waited >= .milliseconds(300))   // the ask ended with timedOut: bounded, never before its limit

        #expect(kill(pid, SIGCONT) == 0)
        #expect(try ask(connection, .saveChanges) == .completed(nil))  // not the late relinquishment
        #expect(child.readLine() == "GOT relinquishToReader /doc.txt")
        #expect(child.readLine() == "GOT saveChanges /doc.txt")
    }

    @Test("cancelling the coordination ends a wait for an answer that never comes")
    func cancelEndsTheWait() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let (child, _) = try serve(path, unanswered: "accommodateDeletion")
        defer { child.closeInput(); child.waitForExit() }
        let connection = try PeerLink(path: path)
        defer { connection.close() }
        let token = CancellationToken()
        let outcome = Locked<Result<RemoteAnswer.Outcome?, RemoteTransportError>?>(nil)
        let done = onThread {
            let result = Result { () throws(RemoteTransportError) in try ask(connection, .accommodateDeletion, timeout: nil, token: token) }
            outcome.withLock { $0 = result }
        }
        #expect(child.expect("GOT accommodateDeletion") == "GOT accommodateDeletion /doc.txt")
        token.cancel()
        #expect(done.wait(seconds: 30))
        #expect(outcome.withLock { $0 } == .failure(.cancelled))
    }

    @Test("a process of another user is refused: the listener drops its connection, the asker will not talk to it")
    func otherUsersAreRefused() throws {
        let scratch = try Scratch()
        // Reachable by `nobody` for this test only (a real socket lives in the 0700 lock directory).
        #expect(chmod(scratch.url.path, 0o755) == 0)
        let path = scratch.url.path + "/ours"
        let frames = Locked<[RemoteFrame]>([])
        let endpoint = try RemoteEndpoint(path: path) { frame, reply in
            frames.withLock { $0.append(frame) }
            if case .request(let request) = frame { reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: nil)))) }
        }
        defer { endpoint.close() }
        #expect(chmod(path, 0o777) == 0)

        let droppedBefore = RemoteLog.droppedCount
        let stranger = try ChildProcess(["remote-ask", path, "30000", "\(Self.nobody)", "unchecked"])
        #expect(stranger.readLine() == "GONE")
        stranger.waitForExit()
        #expect(RemoteLog.droppedCount > droppedBefore)
        #expect(frames.withLock { $0 }.isEmpty)

        let friend = try ChildProcess(["remote-ask", path, "30000"])
        #expect(friend.readLine() == "ANSWERED")
        friend.waitForExit()
        #expect(frames.withLock { $0.count } == 1)

        // The other way round: a listener of another user is refused by the asker.
        let theirs = scratch.url.path + "/theirs"
        #expect(mkdir(theirs, 0o777) == 0 && chmod(theirs, 0o777) == 0)
        let (server, _) = try serve(theirs + "/peer", as: Self.nobody)
        defer { server.closeInput(); server.waitForExit() }
        #expect(throws: RemoteTransportError.refusedPeer(uid: Self.nobody)) { try PeerLink(path: theirs + "/peer").close() }
    }

    @Test("a malformed frame or an oversized length is dropped and logged, the connection closed, the endpoint keeps serving")
    func malformedFramesAreDropped() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let frames = Locked<[RemoteFrame]>([])
        let endpoint = try RemoteEndpoint(path: path) { frame, reply in
            frames.withLock { $0.append(frame) }
            if case .request(let request) = frame { reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: nil)))) }
        }
        defer { endpoint.close() }
        let garbage: [[UInt8]] = [
            [6, 0, 0, 0, 1, 99, 0, 0, 0, 0],  // unknown kind
            [3, 0, 0, 0, 9, 1, 0],            // unknown version
            [0xFF, 0xFF, 0xFF, 0x7F],          // 2 GiB announced
        ]
        for bytes in garbage {
            let before = RemoteLog.droppedCount
            let fd = try UnixSocket.connect(to: path).get()
            defer { close(fd) }
            try UnixSocket.sendAll(fd, bytes, deadline: nil).get()
            var byte: UInt8 = 0
            #expect(recv(fd, &byte, 1, 0) == 0)  // closed on us
            #expect(RemoteLog.droppedCount > before)
        }
        #expect(frames.withLock { $0 }.isEmpty)
        #expect(RemoteTesting.askOnce(at: path, timeout: .seconds(30)) == "ANSWERED")
    }

    @Test("a connection beyond the limit is served, and the connection idle the longest is closed and logged")
    func connectionLimit() throws {
        let scratch = try Scratch()
        let path = scratch.url.path + "/peer"
        let endpoint = try RemoteEndpoint(path: path, maximumConnections: 2) { frame, reply in
            if case .request(let request) = frame { reply.send(.answer(RemoteAnswer(id: request.id, outcome: .relinquished(reacquirer: nil)))) }
        }
        defer { endpoint.close() }
        let first = try PeerLink(path: path), second = try PeerLink(path: path)
        defer { first.close(); second.close() }
        #expect(try ask(first, .relinquishToWriter) == .relinquished(reacquirer: nil))  // both accepted by now
        #expect(try ask(second, .relinquishToWriter) == .relinquished(reacquirer: nil))
        let before = RemoteLog.droppedCount
        let third = try PeerLink(path: path)
        defer { third.close() }
        #expect(try ask(third, .relinquishToWriter) == .relinquished(reacquirer: nil))
        #expect(RemoteLog.droppedCount > before)
        // The first was idle the longest: closed for the third (an asker reconnects: RemoteDelivery).
        #expect(throws: RemoteTransportError.peerGone) { try ask(first, .relinquishToReader) }
        #expect(try ask(second, .relinquishToReader) == .relinquished(reacquirer: nil))
    }

    @Test("a socket path longer than sun_path works (through /proc/self/fd)")
    func longSocketPaths() throws {
        let scratch = try Scratch()
        let folder = scratch.url.path + "/" + String(repeating: "d", count: 100)
        #expect(mkdir(folder, 0o700) == 0)
        let path = folder + "/peer"
        #expect(path.utf8.count > UnixSocket.pathCapacity)
        let (child, _) = try serve(path)
        defer { child.closeInput(); child.waitForExit() }
        #expect(RemoteTesting.askOnce(at: path, timeout: .seconds(30)) == "ANSWERED")
    }
}

struct TransportTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
